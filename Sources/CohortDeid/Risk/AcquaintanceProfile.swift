import CohortCore

/// What someone who knows a participant can know from their records, and can look for in an
/// export (issue 27): the classes of devices they use, the kinds they record, roughly how many
/// days they were active, and — only where shifts keep them — the weekday and month of their
/// first record. Built from published rows, by the export (k-anonymity reaches k over these too)
/// and by `cohort deid risk` (which checks it), with the same texts.
///
/// Which of these carry a real signal: a shift by days (`whole_weeks: false`) is drawn evenly
/// over at least a week of values, so a published weekday says nothing about the real one, and
/// a published month says only that the real first record lies within `max_days` after it (a
/// window, not a class: stated in the docs, not counted here). Device classes (the protocol's
/// `records.source` map), kinds and active days are not shifted: an acquaintance who knows the
/// participant's watch, what they log and roughly how long they took part can look for exactly
/// these.
public struct AcquaintanceProfile: Sendable {
    /// Per kind: the published local days and device classes of its records. The export holds
    /// every included participant's profile at once, so days are a bitmap (``DaySet``: a few
    /// words for a participant's months) rather than a hashed set (about 1.5 KB per kind): the
    /// sets made the export's peak memory grow by about 12 KB per participant (issue 28).
    private var byKind: [String: (days: DaySet, sources: Set<String>, first: Int64, firstOffset: Int32)] = [:]

    /// Width in days of the active-days bands (roughly the quarters someone took part).
    package static let activeDaysBand = 90

    /// An empty profile.
    package init() {}

    /// The attribute names, in ``values(weekdayKept:)`` order. `weekdayKept`: the shifts keep
    /// weekdays (whole weeks) or there is no shift, so the first record's weekday and month are
    /// what an acquaintance knows.
    public static func attributes(weekdayKept: Bool) -> [String] {
        (weekdayKept ? ["first_record_weekday", "first_record_month"] : []) + ["device_class", "kinds", "active_days"]
    }

    /// The kinds with at least one record.
    public var kinds: Set<String> { Set(byKind.keys) }

    /// Adds one published record: its kind, start (milliseconds, written at `offsetSeconds`)
    /// and source (nil or empty: none).
    ///
    /// The kind's entry is changed in place (one lookup; a copy taken out of the dictionary
    /// would copy its day bitmap and sources on every record while the dictionary still held them).
    public mutating func add(kind: String, startMs: Int64, offsetSeconds: Int32, source: String?) {
        let day = TimeAttacks.localDay(startMs, offsetSeconds)
        Self.add(to: &byKind[kind, default: (DaySet(), [], startMs, offsetSeconds)], day: day, startMs: startMs, offsetSeconds, source)
    }

    private static func add(
        to entry: inout (days: DaySet, sources: Set<String>, first: Int64, firstOffset: Int32), day: Int, startMs: Int64, _ offsetSeconds: Int32,
        _ source: String?
    ) {
        if let source, !source.isEmpty { entry.sources.insert(source) }
        entry.days.insert(day)
        if startMs < entry.first { (entry.first, entry.firstOffset) = (startMs, offsetSeconds) }
    }

    /// The attribute texts: device classes and kinds as sorted `;`-joined sets, active days in
    /// bands of ``activeDaysBand`` (`0+`, `90+`, …), the first record's ISO weekday and month —
    /// of the records of `kinds` only (nil: every kind), with device classes left empty when
    /// `sources` is false (the export publishes no source).
    public func values(weekdayKept: Bool, kinds: Set<String>? = nil, sources: Bool = true) -> [String] {
        let kept = byKind.filter { kinds?.contains($0.key) ?? true }
        var result: [String] = []
        if weekdayKept {
            let first = kept.values.min { $0.first < $1.first }
            let date = first.map { CivilDate(daysSinceEpoch: TimeAttacks.localDay($0.first, $0.firstOffset)) }
            result += [date.map { String($0.isoWeekday) } ?? "", date.map { String($0.month) } ?? ""]
        }
        let classes = sources ? kept.values.reduce(into: Set<String>()) { $0.formUnion($1.sources) } : []
        var days = DaySet()
        for entry in kept.values { days.formUnion(entry.days) }
        return result + [
            classes.sorted().joined(separator: ";"), kept.keys.sorted().joined(separator: ";"),
            String(days.count / Self.activeDaysBand * Self.activeDaysBand) + "+",
        ]
    }
}

/// A set of day numbers as a bitmap over the words that hold them (64 days a word, from the
/// word of the earliest day): a participant's few months of days cost a few words.
struct DaySet: Sendable {
    /// The first day of `words[0]` (a multiple of 64).
    private var base = 0
    private var words: [UInt64] = []

    /// How many days the set holds.
    var count: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }

    mutating func insert(_ day: Int) {
        let wordBase = (day >> 6) << 6  // rounds down, negative days too
        if words.isEmpty {
            base = wordBase
            words = [0]
        } else if wordBase < base {
            words.insert(contentsOf: repeatElement(0, count: (base - wordBase) >> 6), at: 0)
            base = wordBase
        }
        let index = (day - base) >> 6
        if index >= words.count { words.append(contentsOf: repeatElement(0, count: index - words.count + 1)) }
        words[index] |= 1 << UInt64(day - base - (index << 6))
    }

    mutating func formUnion(_ other: DaySet) {
        for (i, word) in other.words.enumerated() where word != 0 {
            for bit in 0..<64 where word & (1 << UInt64(bit)) != 0 { insert(other.base + (i << 6) + bit) }
        }
    }
}
