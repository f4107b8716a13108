import CohortIO
import CohortCore
public import Foundation

/// Reads a CSV dump of the `health_metrics` table (`\copy health_metrics TO 'x.csv' CSV HEADER`
/// or a spreadsheet export): the header names the columns, in any order; `user_id` and
/// `recorded_at` are required, metric columns optional, `raw_data` and unknown columns ignored
/// (never read into memory beyond the CSV row). An empty field is NULL.
public enum HealthMetricsCSV {
    /// Calls `body` with each row.
    public static func forEachDay(url: URL, _ body: (HealthMetricsDay) throws -> Void) throws {
        let file = url.path
        let reader = try CSVReader(url: url)
        guard let header = try reader.next() else {
            throw CohortError.invalid("the file is empty", file: file, line: 1, hint: "the first line is the header: user_id,recorded_at,source,timezone,steps,…")
        }
        let names = header.fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard let user = names.firstIndex(of: "user_id"), let recorded = names.firstIndex(of: "recorded_at") else {
            throw CohortError.invalid("the header lacks user_id or recorded_at", file: file, line: header.line,
                hint: "a health_metrics dump has the table's column names as its header")
        }
        let source = names.firstIndex(of: "source"), zone = names.firstIndex(of: "timezone")
        let metrics: [(Int, HealthMetric)] = names.enumerated().compactMap { i, name in HealthMetric(rawValue: name).map { (i, $0) } }
        while let row = try reader.next() {
            guard row.fields.count == names.count else {
                throw CohortError.invalid("expected \(names.count) fields, found \(row.fields.count)", file: file, line: row.line,
                    hint: "quote fields that contain commas")
            }
            let f = row.fields
            func optional(_ i: Int?) -> String? { i.flatMap { f[$0].isEmpty ? nil : f[$0] } }
            try body(
                HealthMetricsDay(
                    userID: f[user], recordedAt: f[recorded], source: optional(source), timeZone: optional(zone),
                    metrics: metrics.compactMap { i, m in f[i].isEmpty ? nil : (m, f[i]) }, file: file, line: row.line))
        }
    }
}
