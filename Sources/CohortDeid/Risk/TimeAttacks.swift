import CohortCore
import Foundation

/// The attacks on a participant's date shift that `cohort deid risk` runs from the published
/// files alone (docs/deidentification.md, "Time"), written as an adversary would run them:
///
/// - **freshness**: nothing real is after the export's creation, so the last published record
///   bounds the shift from below (`shift ≥ last day − creation day`);
/// - **dst**: a daylight-saving transition moved by the shift shows as a local-day aggregate that
///   is not 24 hours long, a dense series with an hour missing at night or two samples at one
///   instant, or a daily log whose time of day steps by an hour; each such day minus a public
///   transition date of the same direction in the zones of the published offset is a candidate;
/// - **holiday**: a daily step count dips on public holidays; for every shift in the range the
///   holidays of the region (from the published offset; every region when it is `+00:00`)
///   are placed on the published days and scored against the same published weekday in nearby
///   weeks; shifts whose holidays show no dip are ruled out;
/// - **exogenous**: dated weather-like series (`environment` kinds) are aligned with a public
///   archive (``WeatherArchive``: day-to-day changes correlated over every station and shift);
///   a confident best alignment recovers the shift. Without an archive, every participant with
///   such records counts as recovered (what the alignment achieves on archive-like series: see
///   TimeAttackTests.theWeatherArchiveAttack…).
///
/// Each attack leaves a set of candidate shifts per participant; **recovered** means one is left,
/// **narrowed** fewer than half the range. `combined` intersects the sets of the first three.
public struct TimeAttacks: Sendable {
    /// One published record of a participant, as read from a CSV table.
    public struct Row: Sendable {
        public var kind: String
        /// Milliseconds since 1970 (UTC).
        public var start: Int64
        public var end: Int64?
        /// The offset the start was written at, in seconds.
        public var offsetSeconds: Int32
        public var value: Double?
        /// The record's published source (device class), if any.
        public var source: String?
        /// Creates a row as given.
        public init(kind: String, start: Int64, end: Int64?, offsetSeconds: Int32, value: Double?, source: String? = nil) {
            self.source = source
            self.kind = kind
            self.start = start
            self.end = end
            self.offsetSeconds = offsetSeconds
            self.value = value
        }
    }

    /// What one attack achieved over the cohort.
    public struct Outcome: Sendable, Hashable, Codable {
        /// `freshness`, `dst`, `holiday`, `exogenous`, `combined`.
        public var attack: String
        /// Participants whose shift the attack left a single candidate for.
        public var recovered: Int
        /// Participants left with fewer than half the range (recovered ones included).
        public var narrowed: Int
        /// Participants the attack had data for.
        public var assessed: Int
    }

    /// The shifts the export drew from (`range_days` of the report).
    public let range: ClosedRange<Int>
    /// The shifts possible a priori: the range, or its multiples of 7 with whole-week shifts.
    public let shifts: [Int]
    /// The day (UTC) of the export's creation (bag-info's `Bagging-Date`); nil: unknown.
    public let createdDay: Int?
    /// Candidate shifts per attack and participant (absent: the attack learned nothing).
    public private(set) var candidates: [String: [String: Set<Int>]] = [:]
    /// Participants per attack that it had data for.
    private var assessed: [String: Int] = [:]
    /// The public weather archive the exogenous attack aligns with; nil: none at hand.
    public let archive: WeatherArchive?

    /// Runs every attack on `timelines` (pseudonym → its rows) with the participants' published
    /// offsets (pseudonym → seconds; nil when participants.csv has none); `otherInstants`
    /// (pseudonym → milliseconds: consent signings, withdrawals) join the freshness attack.
    package init(
        range: ClosedRange<Int>, wholeWeeks: Bool = false, createdDay: Int?, timelines: [String: [Row]], offsets: [String: Int32],
        otherInstants: [String: [Int64]] = [:], archive: WeatherArchive? = nil
    ) {
        self.range = range
        self.archive = archive
        shifts = wholeWeeks ? range.filter { $0 % 7 == 0 } : Array(range)
        self.createdDay = createdDay
        for (pseudonym, instants) in otherInstants where (timelines[pseudonym] ?? []).isEmpty {
            record("freshness", pseudonym, freshness([], also: instants))
        }
        for (pseudonym, rows) in timelines where !rows.isEmpty {
            let sorted = rows.sorted { $0.start < $1.start }
            var offset = offsets[pseudonym] ?? sorted.first?.offsetSeconds
            // Times written in UTC (the offset generalized): local-day aggregates still start at
            // local midnight, which gives the offset back.
            if offset == nil || offset == 0 { offset = Self.inferredOffset(sorted) ?? offset }
            record("freshness", pseudonym, freshness(sorted, also: otherInstants[pseudonym] ?? []))
            record("dst", pseudonym, dst(sorted, offset: offset))
            record("holiday", pseudonym, holiday(sorted, offset: offset))
            record("exogenous", pseudonym, exogenous(sorted))
        }
        // Combined without the weather (whose true value is not known here); contradictory
        // inferences (an empty intersection) teach nothing.
        var combined: [String: Set<Int>] = [:]
        for attack in ["freshness", "dst", "holiday"] {
            for (pseudonym, set) in candidates[attack] ?? [:] {
                combined[pseudonym] = combined[pseudonym].map { $0.intersection(set) } ?? set
            }
        }
        candidates["combined"] = combined.filter { !$0.value.isEmpty }
        assessed["combined"] = timelines.count
    }

    private mutating func record(_ attack: String, _ pseudonym: String, _ result: (assessed: Bool, set: Set<Int>?)) {
        if result.assessed { assessed[attack, default: 0] += 1 }
        if let set = result.set { candidates[attack, default: [:]][pseudonym] = set }
    }

    /// Per attack, recovered and narrowed counts.
    public var outcomes: [Outcome] {
        let half = shifts.count / 2
        return ["freshness", "dst", "holiday", "exogenous", "combined"].map { attack in
            let sets = candidates[attack] ?? [:]
            return Outcome(
                attack: attack, recovered: sets.values.filter { $0.count == 1 }.count, narrowed: sets.values.filter { $0.count < half }.count,
                assessed: assessed[attack] ?? 0)
        }
    }

    static let day: Int64 = 86_400_000

    /// The published local day (days since 1970) of an instant written at `offset` seconds.
    package static func localDay(_ ms: Int64, _ offset: Int32) -> Int {
        Int((ms + Int64(offset) * 1000 - (ms + Int64(offset) * 1000 < 0 ? day - 1 : 0)) / day)
    }

    /// The offset local-day aggregates (23 to 25 hours) point at: minus the UTC time of day most
    /// of them start at; nil without such records.
    static func inferredOffset(_ rows: [Row]) -> Int32? {
        var counts: [Int64: Int] = [:]
        for row in rows {
            guard let end = row.end, abs(end - row.start - day) <= 3_600_000 else { continue }
            counts[row.start - floorDiv(row.start, day) * day, default: 0] += 1
        }
        guard let start = counts.max(by: { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) })?.key else { return nil }
        var offset = -start / 1000  // seconds
        if offset <= -12 * 3600 { offset += 86_400 }
        return Int32(offset)
    }

    // MARK: Freshness

    func freshness(_ rows: [Row], also instants: [Int64]) -> (assessed: Bool, set: Set<Int>?) {
        guard let createdDay, let last = (rows.map { $0.end ?? $0.start } + instants).max() else { return (false, nil) }
        // Real days are at most the creation day (a day's slack for zones ahead of UTC).
        let bound = Int(Self.floorDiv(last, Self.day)) - (createdDay + 1)
        let set = Set(shifts.filter { $0 >= bound })
        return (true, set.count < shifts.count ? set : nil)
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }

    // MARK: DST

    /// Public transition days (local dates) and directions (true: forward) of the zones that use
    /// a standard offset, 2015–2035.
    static let transitions: [Int32: [(day: Int, forward: Bool)]] = {
        let zones = [
            "America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles", "America/Anchorage", "Europe/Berlin",
            "Europe/London", "Europe/Helsinki", "Australia/Sydney", "Australia/Adelaide", "Pacific/Auckland", "America/Sao_Paulo",
        ]
        var result: [Int32: [(day: Int, forward: Bool)]] = [:]
        for name in zones {
            guard let zone = TimeZone(identifier: name) else { continue }
            var date = Date(timeIntervalSince1970: 1_420_070_400)  // 2015-01-01
            while let next = zone.nextDaylightSavingTimeTransition(after: date), next.timeIntervalSince1970 < 2_051_222_400 {
                let before = zone.secondsFromGMT(for: next.addingTimeInterval(-1))
                let after = zone.secondsFromGMT(for: next)
                let standard = Int32(min(before, after))
                let local = Int64(next.timeIntervalSince1970 * 1000) + Int64(after) * 1000
                result[standard, default: []].append((Int(floorDiv(local, day)), after > before))
                date = next
            }
        }
        return result
    }()

    func dst(_ rows: [Row], offset: Int32?) -> (assessed: Bool, set: Set<Int>?) {
        // Days and hours are the participant's local ones: at the published offset, or at the
        // one inferred from day aggregates when times are written in UTC.
        var anomalies: [(day: Int, forward: Bool)] = []
        var byKind: [String: [Row]] = [:]
        for row in rows { byKind[row.kind, default: []].append(row) }
        for (_, series) in byKind {
            // Local-day aggregates that are not 24 hours long.
            for row in series {
                guard let end = row.end else { continue }
                let length = end - row.start
                if length == 82_800_000 || length == 90_000_000 {
                    anomalies.append((Self.localDay(row.start + length / 2, offset ?? row.offsetSeconds), length < Self.day))
                }
            }
            let steps = zip(series, series.dropFirst()).map { ($0, $1.start - $0.start) }
            let dense = steps.map(\.1).filter { $0 > 0 }.sorted()
            if let median = dense.isEmpty ? nil : dense[dense.count / 2], median < 30 * 60_000 {
                for (row, step) in steps {
                    let hour = Int(Self.floorDiv(row.start + Int64(offset ?? row.offsetSeconds) * 1000, 3_600_000) % 24)
                    if step == 0 { anomalies.append((Self.localDay(row.start, offset ?? row.offsetSeconds), false)) }
                    if step == median + 3_600_000, (0...5).contains(hour) {
                        anomalies.append((Self.localDay(row.start + step, offset ?? row.offsetSeconds), true))
                    }
                }
            } else if series.count >= 7 {
                // A daily log whose time of day steps by exactly an hour.
                for (row, step) in steps where step > 20 * 3_600_000 && step < 28 * 3_600_000 {
                    let change = step - Self.day
                    if abs(change) == 3_600_000 { anomalies.append((Self.localDay(row.start + step, offset ?? row.offsetSeconds), change < 0)) }
                }
            }
        }
        guard !anomalies.isEmpty else { return (true, nil) }
        let standards = offset.map { $0 == 0 ? Array(Self.transitions.keys) : [$0, $0 - 3600] } ?? Array(Self.transitions.keys)
        var inferred: Set<Int> = []
        for anomaly in anomalies {
            for standard in standards {
                for transition in Self.transitions[standard] ?? [] where transition.forward == anomaly.forward {
                    let shift = anomaly.day - transition.day
                    if range.contains(shift), shifts.contains(shift) { inferred.insert(shift) }
                }
            }
        }
        return (true, inferred.isEmpty ? nil : inferred)
    }

    // MARK: Holidays

    func holiday(_ rows: [Row], offset: Int32?) -> (assessed: Bool, set: Set<Int>?) {
        // A daily step count: one value per local day, each record about a day long.
        var values: [Int: Double] = [:]
        for row in rows where row.kind == "steps" {
            guard let value = row.value, let end = row.end, abs(end - row.start - Self.day) <= 3_600_000 else { continue }
            values[Self.localDay(row.start + (end - row.start) / 2, offset ?? row.offsetSeconds), default: 0] += value
        }
        guard values.count >= 28 else { return (false, nil) }
        // Residuals against the same published weekday of the surrounding three weeks each way:
        // whatever the shift, one published weekday is one real weekday.
        var residual: [Int: Double] = [:]
        for (day, value) in values {
            let peers = (-3...3).compactMap { $0 == 0 ? nil : values[day + 7 * $0] }.sorted()
            guard peers.count >= 3 else { continue }
            residual[day] = value - peers[peers.count / 2]
        }
        let spread = Self.robustSpread(Array(residual.values))
        guard spread > 0, let first = values.keys.min(), let last = values.keys.max() else { return (true, nil) }
        let regions = PublicHolidays.regions(forOffsetSeconds: offset)
        guard !regions.isEmpty else { return (true, nil) }
        var holidays: [PublicHolidays.Region: Set<Int>] = [:]
        let firstYear = CivilDate(daysSinceEpoch: first - range.upperBound).year
        let lastYear = CivilDate(daysSinceEpoch: last - range.lowerBound).year
        for region in regions {
            for year in firstYear...lastYear {
                // Weekday holidays only: on a weekend the series dips anyway.
                for date in PublicHolidays.dates(region, year: year) where date.isoWeekday <= 5 { holidays[region, default: []].insert(date.daysSinceEpoch) }
            }
        }
        // Each shift puts the region's holidays on some published days: its score is the mean
        // standardized residual there. A clear dip (the best score 5 spreads down or more: chance dips over a hundred shifts reach 3) makes
        // the adversary keep the shifts that dip at least 60% as deep, and those that put no
        // holiday in the window (nothing rules them out).
        var scores: [Int: Double] = [:]
        var unscored: Set<Int> = []
        for shift in shifts {
            var best: Double?
            for region in regions {
                let values = (first...last).compactMap { day -> Double? in
                    guard holidays[region]?.contains(day - shift) == true else { return nil }
                    return residual[day].map { $0 / spread }
                }
                guard !values.isEmpty else { continue }
                let mean = values.reduce(0, +) / Double(values.count)
                best = min(best ?? mean, mean)
            }
            if let best { scores[shift] = best } else { unscored.insert(shift) }
        }
        guard let deepest = scores.values.min(), deepest <= -5 else { return (true, nil) }
        let plausible = unscored.union(scores.filter { $0.value <= deepest * 0.6 }.keys)
        return (true, plausible.count < shifts.count ? plausible : nil)
    }

    /// 1.4826 × the median absolute deviation from the median.
    static func robustSpread(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let median = sorted[sorted.count / 2]
        let deviations = values.map { abs($0 - median) }.sorted()
        return 1.4826 * deviations[deviations.count / 2]
    }

    // MARK: Exogenous

    /// Kinds a public archive holds (the `environment` data type's).
    package static let exogenousKinds: Set<String> = Set(DataType.environment.kinds.map(\.rawValue))

    func exogenous(_ rows: [Row]) -> (assessed: Bool, set: Set<Int>?) {
        guard rows.contains(where: { Self.exogenousKinds.contains($0.kind) }) else { return (false, nil) }
        // Without an archive: matched against one, a dated weather series gives the shift; the
        // true value is unknown here, so the participant counts as recovered.
        guard let archive else { return (true, [Int.min]) }
        // Daily means per kind on the published local days; each kind aligned on its own, the
        // most confident alignment kept.
        var daily: [String: [Int: (sum: Double, n: Double)]] = [:]
        for row in rows where Self.exogenousKinds.contains(row.kind) {
            guard let value = row.value else { continue }
            let day = Self.localDay(row.start, row.offsetSeconds)
            let cell = daily[row.kind]?[day] ?? (0, 0)
            daily[row.kind, default: [:]][day] = (cell.sum + value, cell.n + 1)
        }
        var best: (shift: Int, margin: Double)?
        for kind in daily.keys.sorted() {
            let means = (daily[kind] ?? [:]).mapValues { $0.sum / $0.n }
            guard let match = archive.align(kind: kind, daily: means, shifts: shifts),
                WeatherArchive.confident(r: match.r, runnerUp: match.runnerUp)
            else { continue }
            if best.map({ match.r - match.runnerUp > $0.margin }) ?? true { best = (match.shift, match.r - match.runnerUp) }
        }
        return (true, best.map { [$0.shift] })
    }
}
