import CohortCore
import CohortPostgres

/// Reads the `health_metrics` table from PostgreSQL with libpq, streamed with
/// `COPY (SELECT …) TO STDOUT`: one row in memory at a time, however large the table. Only the
/// key, time zone and metric columns are selected; `raw_data` is never read.
package enum HealthMetricsTable {
    /// Calls `body` with each row of `table` (`name` or `schema.name`) in the database at `url`.
    package static func forEachDay(url: String, table: String, _ body: (HealthMetricsDay) throws -> Void) throws {
        let connection = try PostgresConnection(url: url)
        let parts = table.split(separator: ".").map(String.init)
        let columnRows = try connection.query(
            "SELECT column_name FROM information_schema.columns WHERE table_name = $1 AND ($2::text IS NULL OR table_schema = $2)",
            [parts.last, parts.count > 1 ? parts[0] : nil])
        let present = Set(columnRows.compactMap { $0.first ?? nil })
        guard !present.isEmpty else {
            throw CohortError(.notFound, "the database has no table named by --table", at: .init(field: "--table"),
                hint: "name the table as it is in the database (health_metrics or schema.health_metrics)")
        }
        guard present.contains("user_id"), present.contains("recorded_at") else {
            throw CohortError.invalid("the table lacks user_id or recorded_at", field: "--table", hint: "point --table at the health_metrics table")
        }
        let metrics = HealthMetric.allCases.filter { present.contains($0.rawValue) }
        let optional = ["source", "timezone"].map { present.contains($0) ? "\($0)::text" : "NULL::text" }
        let select = (["user_id::text", "recorded_at::text"] + optional + metrics.map { "\($0.rawValue)::text" }).joined(separator: ", ")
        let name = try connection.quotedIdentifier(table)
        let label = "table \(table)"
        var row = 0
        var fields: [String?] = []
        try connection.copyOut("COPY (SELECT \(select) FROM \(name)) TO STDOUT") { bytes in
            row += 1
            fields.removeAll(keepingCapacity: true)
            CopyText.fields(bytes, into: &fields)
            guard fields.count == 4 + metrics.count, let user = fields[0], let day = fields[1] else {
                throw CohortError.invalid("a row has no user_id or recorded_at", file: label, line: row)
            }
            var values: [(HealthMetric, String)] = []
            for (i, metric) in metrics.enumerated() { if let v = fields[4 + i] { values.append((metric, v)) } }
            try body(HealthMetricsDay(userID: user, recordedAt: day, source: fields[2], timeZone: fields[3], metrics: values, file: label, line: row))
        }
    }
}

/// PostgreSQL's COPY text format: fields separated by tabs, `\N` for NULL, backslash escapes.
enum CopyText {
    static func fields(_ bytes: UnsafeBufferPointer<UInt8>, into fields: inout [String?]) {
        var end = bytes.count
        if end > 0, bytes[end - 1] == 0x0A { end -= 1 }
        var current: [UInt8] = []
        var i = 0
        var isNull = false
        while i <= end {
            if i == end || bytes[i] == 0x09 {
                fields.append(isNull ? nil : String(decoding: current, as: UTF8.self))
                current.removeAll(keepingCapacity: true)
                isNull = false
                i += 1
                continue
            }
            let b = bytes[i]
            if b == 0x5C, i + 1 < end {
                let next = bytes[i + 1]
                i += 2
                switch next {
                case UInt8(ascii: "N"): isNull = true
                case UInt8(ascii: "t"): current.append(0x09)
                case UInt8(ascii: "n"): current.append(0x0A)
                case UInt8(ascii: "r"): current.append(0x0D)
                case UInt8(ascii: "b"): current.append(0x08)
                case UInt8(ascii: "f"): current.append(0x0C)
                case UInt8(ascii: "v"): current.append(0x0B)
                default: current.append(next)
                }
                continue
            }
            current.append(b)
            i += 1
        }
    }
}
