import CohortCore
public import Foundation
import Yams
import CohortIO

/// One reviewed exception to the residual-PII scan: a value of a table's column, named by its
/// SHA-256 (so the list itself holds no identifier), that a named reviewer approved for export.
public struct ResidualException: Sendable, Hashable, Codable {
    /// The table (``ResidualFinding/table``: `symptom_logs`, `Observation`, `Bundle`…).
    public var table: String
    /// The CSV column or JSON key path (``ResidualFinding/field``).
    public var column: String
    /// Lowercase hex SHA-256 of the exact value (``ResidualFinding/valueSHA256``).
    package var valueSHA256: String
    /// Who approved it.
    public var reviewer: String
    /// Why the value may be published.
    public var reason: String

    /// An exception as given.
    package init(table: String, column: String, valueSHA256: String, reviewer: String, reason: String) {
        self.table = table
        self.column = column
        self.valueSHA256 = valueSHA256
        self.reviewer = reviewer
        self.reason = reason
    }

    /// Whether this exception covers `finding` (same table, column and value hash).
    package func covers(_ finding: ResidualFinding) -> Bool {
        finding.table == table && finding.field == column && finding.valueSHA256 == valueSHA256
    }

    enum CodingKeys: String, CodingKey {
        case table, column, reviewer, reason
        case valueSHA256 = "value_sha256"
    }
}

/// The reviewed exceptions of `cohort export --allow FILE`: a CSV file with the header
/// `table,column,value_sha256,reviewer,reason`, or a YAML list of mappings with those keys.
/// Every field is required; problems are reported with file, line and field.
public struct ResidualExceptionList: Sendable, Hashable {
    /// The exceptions, in file order.
    public var exceptions: [ResidualException]

    /// A list as given.
    package init(_ exceptions: [ResidualException]) {
        self.exceptions = exceptions
    }

    static let columns = ["table", "column", "value_sha256", "reviewer", "reason"]

    /// Reads and checks the list at `url` (`.yaml`/`.yml`: YAML, anything else: CSV).
    public static func load(_ url: URL) throws -> ResidualExceptionList {
        let ext = url.pathExtension.lowercased()
        let rows: [(line: Int, fields: [String: String])]
        if ext == "yaml" || ext == "yml" {
            rows = try yamlRows(url)
        } else {
            rows = try csvRows(url)
        }
        var result: [ResidualException] = []
        for row in rows {
            for column in columns where (row.fields[column] ?? "").trimmingCharacters(in: .whitespaces).isEmpty {
                throw CohortError.invalid(
                    "expected a non-empty \(column)", file: url.path, line: row.line, field: column,
                    hint: "each exception names table, column, value_sha256, a reviewer and a reason")
            }
            let hash = (row.fields["value_sha256"] ?? "").trimmingCharacters(in: .whitespaces).lowercased()
            guard hash.count == 64, hash.allSatisfy(\.isHexDigit) else {
                throw CohortError.invalid(
                    "expected 64 hex digits (the SHA-256 of the exact value)", file: url.path, line: row.line, field: "value_sha256",
                    hint: "copy value_sha256 from `cohort deid scan DIR --format json`")
            }
            func field(_ name: String) -> String { (row.fields[name] ?? "").trimmingCharacters(in: .whitespaces) }
            result.append(
                ResidualException(table: field("table"), column: field("column"), valueSHA256: hash, reviewer: field("reviewer"), reason: field("reason")))
        }
        return ResidualExceptionList(result)
    }

    private static func csvRows(_ url: URL) throws -> [(line: Int, fields: [String: String])] {
        let reader = try CSVReader(url: url)
        guard let header = try reader.next() else {
            throw CohortError.invalid("the exceptions file is empty", file: url.path, line: 1, hint: "header: " + columns.joined(separator: ","))
        }
        let names = header.fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        for column in columns where !names.contains(column) {
            throw CohortError.invalid(
                "expected a column named \(column) in the header", file: url.path, line: header.line, field: column,
                hint: "header: " + columns.joined(separator: ","))
        }
        var rows: [(line: Int, fields: [String: String])] = []
        while let row = try reader.next() {
            var fields: [String: String] = [:]
            for (name, value) in zip(names, row.fields) { fields[name] = value }
            rows.append((row.line, fields))
        }
        return rows
    }

    private static func yamlRows(_ url: URL) throws -> [(line: Int, fields: [String: String])] {
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw CohortError(.notFound, "cannot read the exceptions file", at: .init(file: url.path), hint: "check the path and permissions")
        }
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
        } catch {
            throw CohortError.invalid("expected YAML", file: url.path, hint: "a list of mappings with " + columns.joined(separator: ", "))
        }
        guard let node else { return [] }
        guard let sequence = node.sequence else {
            throw CohortError.invalid(
                "expected a list of exceptions", file: url.path, line: node.mark?.line ?? 1,
                hint: "- {table: …, column: …, value_sha256: …, reviewer: …, reason: …}")
        }
        var rows: [(line: Int, fields: [String: String])] = []
        for item in sequence {
            let line = item.mark?.line ?? 1
            guard let mapping = item.mapping else {
                throw CohortError.invalid("expected a mapping", file: url.path, line: line, hint: "keys: " + columns.joined(separator: ", "))
            }
            var fields: [String: String] = [:]
            for (key, value) in mapping {
                if let name = key.string { fields[name.lowercased()] = value.string ?? "" }
            }
            rows.append((line, fields))
        }
        return rows
    }

    /// The exception covering `finding`, if any.
    public func exception(covering finding: ResidualFinding) -> ResidualException? {
        exceptions.first { $0.covers(finding) }
    }
}
