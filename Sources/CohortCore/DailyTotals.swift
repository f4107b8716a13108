package import Foundation

/// One participant's overlap-free daily totals of one cumulative kind (steps, distance, flights,
/// active and basal energy, exercise time).
///
/// An iPhone and an Apple Watch both count steps for the same minutes, and both samples are
/// stored (their sources differ), so a per-day sum counts those minutes twice. As Apple's Health
/// app does, each minute is counted once, from the source that ranks first (``SourcePriority``:
/// the protocol's `source_priority`, else watch before phone before other):
///
/// - sources are taken in priority order (ties: by name). A sample's value is spread evenly over
///   its interval; the part of the interval that a higher-ranked source already covers is not
///   counted, the rest is (a 10-minute iPhone sample of 1,000 steps whose last 5 minutes the
///   watch covers counts 500). Samples of one source never cancel each other.
/// - a point sample (no end, or end = start) counts whole unless a higher-ranked source's
///   interval contains its instant.
/// - the counted parts are split at the participant's local midnights (a sample from 23:50 to
///   00:10 puts half its uncovered value on each day); a day is a calendar day in `timeZone`,
///   23 or 25 hours long on DST days.
///
/// Memory: the samples added, 32 bytes each plus their source names.
package struct DailyTotals: Sendable {
    /// The kinds whose values add up over time, and so have daily totals.
    package static let cumulativeKinds: Set<RecordKind> = [.steps, .distanceWalkingRunning, .flightsClimbed, .activeEnergy, .basalEnergy, .exerciseTime]

    /// The code (in cohort's local code system, ``Coding/localSystem``) of a daily total's FHIR
    /// Observation is this followed by the kind (`daily_total_steps`): not the kind's own code, so
    /// a reader never takes a total for one more sample.
    package static let fhirCodePrefix = "daily_total_"

    /// One day's total.
    package struct Total: Sendable, Equatable {
        /// The local calendar day.
        public var day: CivilDate
        /// The overlap-free total, in the kind's canonical unit.
        public var value: Double
        /// The day's samples that contributed (some or all of their value).
        package var samplesCounted: Int

        /// A day's total.
        package init(day: CivilDate, value: Double, samplesCounted: Int) {
            self.day = day
            self.value = value
            self.samplesCounted = samplesCounted
        }
    }

    struct Sample: Sendable {
        var start: Int64
        var end: Int64
        var value: Double
    }

    /// How sources rank.
    package let priority: SourcePriority
    /// Samples by source.
    private var samples: [String: [Sample]] = [:]

    /// An empty accumulator whose sources rank by `priority`.
    package init(priority: SourcePriority = SourcePriority()) {
        self.priority = priority
    }

    /// Adds a sample: `value` over `start`…`end` (nil or equal: a point) from `source`.
    public mutating func add(start: Timestamp, end: Timestamp?, value: Double, source: String?) {
        let s = start.epochMilliseconds
        let e = max(s, end?.epochMilliseconds ?? s)
        samples[source ?? "", default: []].append(Sample(start: s, end: e, value: value))
    }

    /// Whether no sample was added.
    public var isEmpty: Bool { samples.isEmpty }

    /// The totals per local day in `timeZone`, in day order.
    package func totals(in timeZone: TimeZone) -> [Total] {
        var byDay: [Int: (value: Double, samples: Int)] = [:]
        var covered: [(Int64, Int64)] = []  // disjoint, sorted by start
        let sources = samples.keys.sorted { a, b in
            let ra = priority.rank(a), rb = priority.rank(b)
            return ra != rb ? ra < rb : a < b
        }
        for source in sources {
            let group = samples[source] ?? []
            for sample in group {
                if sample.end == sample.start {
                    guard !Self.contains(covered, sample.start) else { continue }
                    let day = Self.day(of: sample.start, in: timeZone)
                    byDay[day, default: (0, 0)].value += sample.value
                    byDay[day, default: (0, 0)].samples += 1
                    continue
                }
                let length = Double(sample.end - sample.start)
                var countedDays = Set<Int>()
                for (a, b) in Self.subtract(covered, from: (sample.start, sample.end)) {
                    for (day, da, db) in Self.split(a, b, in: timeZone) {
                        byDay[day, default: (0, 0)].value += sample.value * Double(db - da) / length
                        countedDays.insert(day)
                    }
                }
                for day in countedDays { byDay[day, default: (0, 0)].samples += 1 }
            }
            covered = Self.union(covered, group.filter { $0.end > $0.start }.map { ($0.start, $0.end) })
        }
        return byDay.keys.sorted().compactMap { day in
            byDay[day].map { Total(day: CivilDate(daysSinceEpoch: day), value: $0.value, samplesCounted: $0.samples) }
        }
    }

    /// Whether `instant` lies inside one of `intervals` (start inclusive, end exclusive).
    static func contains(_ intervals: [(Int64, Int64)], _ instant: Int64) -> Bool {
        var low = 0, high = intervals.count
        while low < high {
            let mid = (low + high) / 2
            if intervals[mid].1 <= instant { low = mid + 1 } else { high = mid }
        }
        return low < intervals.count && intervals[low].0 <= instant
    }

    /// The parts of `interval` that no interval of `covered` overlaps.
    static func subtract(_ covered: [(Int64, Int64)], from interval: (Int64, Int64)) -> [(Int64, Int64)] {
        var low = 0, high = covered.count
        while low < high {
            let mid = (low + high) / 2
            if covered[mid].1 <= interval.0 { low = mid + 1 } else { high = mid }
        }
        var result: [(Int64, Int64)] = []
        var cursor = interval.0
        var i = low
        while i < covered.count, covered[i].0 < interval.1 {
            if covered[i].0 > cursor { result.append((cursor, covered[i].0)) }
            cursor = max(cursor, covered[i].1)
            i += 1
        }
        if cursor < interval.1 { result.append((cursor, interval.1)) }
        return result
    }

    /// `a` and `b` merged into disjoint intervals sorted by start.
    static func union(_ a: [(Int64, Int64)], _ b: [(Int64, Int64)]) -> [(Int64, Int64)] {
        let all = (a + b).sorted { $0.0 < $1.0 }
        var merged: [(Int64, Int64)] = []
        for interval in all {
            if let last = merged.last, interval.0 <= last.1 {
                merged[merged.count - 1].1 = max(last.1, interval.1)
            } else {
                merged.append(interval)
            }
        }
        return merged
    }

    /// The local day (days since 1970-01-01) of the instant `ms` in `zone`.
    static func day(of ms: Int64, in zone: TimeZone) -> Int {
        let offset = Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(ms) / 1000))) * 1000
        let local = ms + offset
        return Int(local >= 0 ? local / 86_400_000 : (local - 86_399_999) / 86_400_000)
    }

    /// `a`…`b` cut at local midnights in `zone`: (day, start, end) pieces.
    static func split(_ a: Int64, _ b: Int64, in zone: TimeZone) -> [(Int, Int64, Int64)] {
        var pieces: [(Int, Int64, Int64)] = []
        var start = a
        while start < b {
            let day = day(of: start, in: zone)
            let nextLocal = Int64(day + 1) * 86_400_000
            let nextMidnight = nextLocal - Int64(Timestamp.resolveOffset(localMs: nextLocal, in: zone)) * 1000
            let end = min(b, max(nextMidnight, start + 1))
            pieces.append((day, start, end))
            start = end
        }
        return pieces
    }
}

/// How the sources of a participant's samples rank when they overlap: the protocol's
/// `source_priority` first, in its order, then every other source by device class — watch, then
/// phone, then anything else — as Apple's Health app ranks its own devices by default.
///
/// An entry names a source as it is stored (`Watch6,2`, `Withings`, case-insensitive) or an Apple
/// product family (`Apple Watch`, `iPhone`: every hardware identifier of that family, see
/// ``DeviceFamily``).
public struct SourcePriority: Sendable, Hashable, Codable {
    /// The protocol's list, highest first.
    package var order: [String]

    /// A ranking with `order` first (empty: by device class only).
    package init(_ order: [String] = []) {
        self.order = order
    }

    /// The rank of `source` (lower counts first).
    package func rank(_ source: String) -> Int {
        let family = DeviceFamily.apple(source)
        if let listed = order.firstIndex(where: { $0.caseInsensitiveCompare(source) == .orderedSame || $0 == family }) { return listed }
        return order.count + Self.deviceClass(source)
    }

    /// 0 for a watch, 1 for a phone, 2 for anything else.
    package static func deviceClass(_ source: String) -> Int {
        let family = DeviceFamily.apple(source)
        let lower = source.lowercased()
        if family == "Apple Watch" || lower.contains("watch") { return 0 }
        if family == "iPhone" || lower.contains("phone") { return 1 }
        return 2
    }
}
