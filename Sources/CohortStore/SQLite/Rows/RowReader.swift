import CohortCore
import Foundation
import GRDB

/// Reads one database row column by column and throws a clear error — table, row, column, what
/// was expected, never the value — where a value is missing or malformed, instead of inventing one.
///
/// Every record type of the store (``ParticipantRow``, ``ConsentRow``, …: one per table) decodes
/// through it. Messages name the file `study.db`; the store's `read`/`write` put the database's
/// full path in the error's location.
struct RowReader {
    let row: Row
    let table: String
    let file: String
    /// The row's SQLite rowid, for messages.
    let rowID: Int64?

    /// `rowIDColumn` names the column holding the rowid (select `rowid AS row_id` for tables
    /// whose primary key is not an integer).
    init(_ row: Row, table: String, file: String = SQLiteStudyStore.fileName, rowIDColumn: String = "row_id") {
        self.row = row
        self.table = table
        self.file = file
        if case let .int64(id) = (row[rowIDColumn] as DatabaseValue?)?.storage { rowID = id } else { rowID = nil }
    }

    func problem(_ column: String, expected: String) -> CohortError {
        Self.problem(table: table, rowID: rowID, column: column, expected: expected, file: file)
    }

    /// The error for a column of row `rowID` of `table` that is not what `expected` says (also
    /// for checks after decoding: a sealed value that does not open).
    static func problem(table: String, rowID: Int64?, column: String, expected: String, file: String = SQLiteStudyStore.fileName) -> CohortError {
        CohortError(
            .integrity, "table \(table), row \(rowID.map(String.init) ?? "?"), column \(column): expected \(expected)",
            at: .init(file: file, field: "\(table).\(column)"),
            hint: "the database was edited or damaged: restore study.db from a backup (cohort does not guess a replacement value)",
            cause: .malformedColumn(table: table, column: column))
    }

    func value(_ column: String) -> DatabaseValue { (row[column] as DatabaseValue?) ?? .null }

    func optionalString(_ column: String) throws -> String? {
        switch value(column).storage {
        case .null: return nil
        case let .string(text): return text
        default: throw problem(column, expected: "text")
        }
    }

    func string(_ column: String) throws -> String {
        guard let text = try optionalString(column) else { throw problem(column, expected: "text, found nothing") }
        return text
    }

    func optionalInt64(_ column: String) throws -> Int64? {
        switch value(column).storage {
        case .null: return nil
        case let .int64(n): return n
        default: throw problem(column, expected: "an integer")
        }
    }

    func int64(_ column: String) throws -> Int64 {
        guard let n = try optionalInt64(column) else { throw problem(column, expected: "an integer, found nothing") }
        return n
    }

    /// A UTC offset in seconds (±18 h).
    func offset(_ column: String) throws -> Int32 {
        let n = try int64(column)
        guard abs(n) <= 18 * 3600 else { throw problem(column, expected: "a UTC offset in seconds (within ±18 hours)") }
        return Int32(n)
    }

    func optionalDouble(_ column: String) throws -> Double? {
        switch value(column).storage {
        case .null: return nil
        case let .double(x): return x
        case let .int64(n): return Double(n)
        default: throw problem(column, expected: "a number")
        }
    }

    func optionalBlob(_ column: String) throws -> [UInt8]? {
        switch value(column).storage {
        case .null: return nil
        case let .blob(data): return Array(data)
        default: throw problem(column, expected: "binary data")
        }
    }

    func uuid(_ column: String) throws -> UUID {
        guard let uuid = UUID(uuidString: try string(column)) else { throw problem(column, expected: "a UUID") }
        return uuid
    }

    func choice<E: RawRepresentable & CaseIterable>(_ column: String, _: E.Type) throws -> E where E.RawValue == String {
        guard let value = E(rawValue: try string(column)) else {
            throw problem(column, expected: "one of " + E.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return value
    }

    func sharingScope(_ column: String) throws -> SharingScope {
        guard let value = SharingScope(rawValue: try string(column)) else {
            throw problem(column, expected: "a sharing scope name (lower-case letters, digits and '-')")
        }
        return value
    }

    func civilDate(_ column: String) throws -> CivilDate {
        guard let date = CivilDate(iso: try string(column)) else { throw problem(column, expected: "a date YYYY-MM-DD") }
        return date
    }
}
