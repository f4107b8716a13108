import CohortCore

/// What someone who knows a participant can know from their records, and can look for in an
/// export (issue 27): the classes of devices they use, the kinds they record, roughly how many
/// days they were active, and — only where shifts keep them — the weekday and month of their
/// first record. Built from published rows, by the export (k-anonymity reaches k over these too)
/// and by `cohort deid risk` (which checks it), with the same texts.
public struct AcquaintanceProfile: Sendable {
    private var sources: Set<String> = []
    private var kinds: Set<String> = []
    private var days: Set<Int> = []
    private var first: (ms: Int64, offset: Int32)?

    /// An empty profile.
    public init() {}

    /// The attribute names, in ``values(weekdayKept:)`` order. `weekdayKept`: the shifts keep
    /// weekdays (whole weeks) or there is no shift, so the first record's weekday and month are
    /// what an acquaintance knows.
    public static func attributes(weekdayKept: Bool) -> [String] {
        (weekdayKept ? ["first_record_weekday", "first_record_month"] : []) + ["device_class", "kinds", "active_days"]
    }

    /// Adds one published record: its kind, start (milliseconds, written at `offsetSeconds`)
    /// and source (nil or empty: none).
    public mutating func add(kind: String, startMs: Int64, offsetSeconds: Int32, source: String?) {
        kinds.insert(kind)
        if let source, !source.isEmpty { sources.insert(source) }
        days.insert(TimeAttacks.localDay(startMs, offsetSeconds))
        if first.map({ startMs < $0.ms }) ?? true { first = (startMs, offsetSeconds) }
    }

    /// The attribute texts: device classes and kinds as sorted `;`-joined sets, active days in
    /// bands of 90 (`0+`, `90+`, …: roughly the quarters someone took part), the first record's ISO weekday and month.
    public func values(weekdayKept: Bool) -> [String] {
        var result: [String] = []
        if weekdayKept {
            let date = first.map { CivilDate(daysSinceEpoch: TimeAttacks.localDay($0.ms, $0.offset)) }
            result += [date.map { String($0.isoWeekday) } ?? "", date.map { String($0.month) } ?? ""]
        }
        return result + [sources.sorted().joined(separator: ";"), kinds.sorted().joined(separator: ";"), String(days.count / 90 * 90) + "+"]
    }
}
