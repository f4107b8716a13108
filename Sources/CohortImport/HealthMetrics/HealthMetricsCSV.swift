import CohortIO
package import CohortCore
package import Foundation

/// Reads a CSV dump of the `health_metrics` table (`\copy health_metrics TO 'x.csv' CSV HEADER`
/// or a spreadsheet export): the header names the columns, in any order; `user_id` and
/// `recorded_at` (or `date`) are required, metric columns optional, `raw_data` and unknown columns ignored
/// (never read into memory beyond the CSV row). An empty field is NULL.
package enum HealthMetricsCSV {
    /// Calls `body` with each row.
    ///
    /// `tally` is called with the reason for each value of a column that is not imported (an
    /// unknown column), so nothing is dropped silently.
    ///
    /// `rejecting` (a partial import, `--rejects`): called with the error of a row that cannot be
    /// read as the header's columns, which is then skipped; nil = such a row ends the import.
    package static func forEachDay(
        url: URL, tally: ((String) -> Void)? = nil, rejecting: ((CohortError) throws -> Void)? = nil, _ body: (HealthMetricsDay) throws -> Void
    ) throws {
        let file = url.path
        let reader = try CSVReader(url: url)
        guard let header = try reader.next() else {
            throw CohortError.invalid("the file is empty", file: file, line: 1, hint: "the first line is the header: user_id,recorded_at,source,timezone,steps,…")
        }
        let names = Self.columnNames(header.fields)
        guard let user = names.firstIndex(of: "user_id") else {
            throw CohortError.invalid("the header has no user_id column", file: file, line: header.line, field: "user_id",
                hint: "a health_metrics dump has the table's column names as its header (user_id, recorded_at or date, source, timezone, metrics)")
        }
        guard let recorded = names.firstIndex(where: dayColumns.contains) else {
            throw CohortError.invalid("the header has no recorded_at (or date) column", file: file, line: header.line, field: "recorded_at",
                hint: "name the column holding each row's day recorded_at or date")
        }
        let source = names.firstIndex(of: "source"), zone = names.firstIndex(of: "timezone")
        let metrics: [(Int, HealthMetric)] = names.enumerated().compactMap { i, name in HealthMetric(rawValue: name).map { (i, $0) } }
        // Columns that are neither keys, bookkeeping nor metrics: counted when they hold a value, never read.
        let unknown: [(Int, String)] = names.enumerated().filter { i, name in
            i != recorded && HealthMetric(rawValue: name) == nil && !Self.knownColumns.contains(name)
        }.map { ($0.offset, $0.element) }
        while let row = try reader.next() {
            guard row.fields.count == names.count else {
                let error = CohortError.invalid("expected as many fields as the header has columns", file: file, line: row.line,
                    hint: "the header has \(names.count) columns; quote fields that contain commas")
                guard let rejecting else { throw error }
                try rejecting(error)
                continue
            }
            let f = row.fields
            for (i, name) in unknown where !f[i].isEmpty { tally?("column not imported: \(name)") }
            func optional(_ i: Int?) -> String? { i.flatMap { f[$0].isEmpty ? nil : f[$0] } }
            try body(
                HealthMetricsDay(
                    userID: f[user], recordedAt: f[recorded], source: optional(source), timeZone: optional(zone),
                    metrics: metrics.compactMap { i, m in f[i].isEmpty ? nil : (m, f[i]) }, file: file, line: row.line))
        }
    }

    /// The names a dump may give the day column: the table's `recorded_at`, or `date` (dumps
    /// through a view or a spreadsheet rename it).
    package static let dayColumns: Set<String> = ["recorded_at", "date"]

    /// Columns of the table that are not metrics and are never imported.
    static let knownColumns: Set<String> = ["id", "user_id", "source", "timezone", "raw_data", "created_at", "updated_at", "device_type"]

    /// The header's column names, trimmed and lowercased; a UTF-8 byte-order mark before the first is dropped.
    static func columnNames(_ fields: [String]) -> [String] {
        fields.enumerated().map { i, name in
            var n = name
            if i == 0, n.hasPrefix("\u{FEFF}") { n.removeFirst() }
            return n.trimmingCharacters(in: .whitespaces).lowercased()
        }
    }

    /// Whether a CSV header (its first line) is a health_metrics dump's: `user_id`, a day column,
    /// and no `participant` column (cohort's own CSV).
    package static func headerLooksLikeDump(_ fields: [String]) -> Bool {
        let names = Set(columnNames(fields))
        return names.contains("user_id") && !names.isDisjoint(with: dayColumns) && !names.contains("participant")
    }
}
