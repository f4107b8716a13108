package import CohortCore
import Foundation

/// Turns daily `health_metrics` rows into records: one per non-null metric with a kind the
/// protocol collects, spanning the day (local midnight to midnight) in the row's time zone;
/// the user is mapped to a study code through the coordinator's user map, and rows of users it
/// does not name are counted and dropped.
package struct HealthMetricsMapper {
    public let userMap: [String: String]
    public let collected: Set<RecordKind>
    public private(set) var tally = ImportTally()
    private var unmapped = Set<String>()
    private var zones: [String: TimeZone] = [:]

    package init(userMap: [String: String], collected: Set<RecordKind>) {
        self.userMap = userMap
        self.collected = collected
    }

    /// For a partial import (`--rejects`): called with the error of each row the mapper cannot
    /// read (a bad date, time zone or number), which is then skipped; nil = the first such error
    /// ends the import.
    package var rejecting: ((CohortError) throws -> Void)?

    /// The records of `day`, handed to `body`.
    public mutating func map(_ day: HealthMetricsDay, _ body: (SourceRecord) throws -> Void) throws {
        do {
            try mapRow(day, body)
        } catch let error as CohortError where rejecting != nil && error.code == .invalidInput {
            try rejecting?(error)
        }
    }

    private mutating func mapRow(_ day: HealthMetricsDay, _ body: (SourceRecord) throws -> Void) throws {
        tally.seen += 1
        guard let code = userMap[day.userID] else {
            tally.unmappedRows += 1
            if unmapped.insert(day.userID).inserted { tally.unmappedUsers += 1 }
            return
        }
        let date = day.recordedAt.prefix(10)
        guard let civil = CivilDate(iso: date) else {
            throw CohortError.invalid("expected a date (YYYY-MM-DD)", file: day.file, line: day.line, field: "recorded_at",
                hint: "recorded_at is the day the row summarizes")
        }
        var zone: TimeZone?
        if let name = day.timeZone, !name.isEmpty {
            if let known = zones[name] {
                zone = known
            } else if let found = TimeZone(identifier: name) {
                zones[name] = found
                zone = found
            } else {
                throw CohortError.invalid("unknown time zone name", file: day.file, line: day.line, field: "timezone",
                    hint: "use an IANA name such as Europe/Berlin, or leave it empty for the participant's zone")
            }
        }
        let start = Self.midnight(civil, zone), end = Self.midnight(civil.adding(days: 1), zone)
        // Every value is checked before any record of the row is handed on, so a refused row
        // (with --rejects) leaves no part of itself behind.
        for (metric, value) in day.metrics where metric.kind.map(collected.contains) == true && Double(value) == nil {
            throw CohortError.invalid("expected a number", file: day.file, line: day.line, field: day.fieldName(metric))
        }
        for (metric, value) in day.metrics {
            guard let kind = metric.kind, collected.contains(kind) else {
                tally.skip(metric.leftOutReason)
                continue
            }
            guard Double(value) != nil else {
                throw CohortError.invalid("expected a number", file: day.file, line: day.line, field: day.fieldName(metric))
            }
            tally.took(metric.rawValue)
            let field = day.fieldName(metric)
            try body(
                SourceRecord(
                    participant: code, kind: kind.rawValue, start: start, end: end, value: value, unit: metric.unit, source: day.source,
                    file: day.file, line: day.line,
                    origins: ["value": field, "unit": field, "start": "recorded_at", "end": "recorded_at", "kind": field], item: metric.rawValue))
        }
    }

    /// Local midnight of `date` in `zone` as ISO 8601 with that zone's offset then; without a
    /// zone, the bare local time (read in the participant's zone).
    static func midnight(_ date: CivilDate, _ zone: TimeZone?) -> String {
        let local = "\(date.description)T00:00:00"
        guard let zone else { return local }
        let offset = Timestamp.resolveOffset(localMs: Int64(date.daysSinceEpoch) * 86_400_000, in: zone)
        let sign = offset < 0 ? "-" : "+"
        let minutes = abs(offset) / 60
        return local + sign + String(format: "%02d:%02d", minutes / 60, minutes % 60)
    }
}
