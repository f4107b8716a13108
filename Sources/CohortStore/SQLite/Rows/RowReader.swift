import CohortCore
import Foundation
import GRDB

/// Reads one database row column by column and throws a clear error — table, row, column, what
/// was expected, never the value — where a value is missing or malformed, instead of inventing one.
///
/// SQLite's ``ColumnReader``: every record type of the store (``ParticipantRow``, ``ConsentRow``,
/// …: one per table) decodes through it. Messages name the file `study.db`; the store's `read`/`write` put the database's
/// full path in the error's location.
struct RowReader: ColumnReader {
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

    /// A `records` row (``recordProblem(participantPK:column:expected:file:)`` names it).
    init(recordRow row: Row) {
        self.init(row, table: "records", rowIDColumn: "participant_pk")
        namesRowByParticipant = true
    }

    /// True for a `records` row, which has no rowid: ``rowID`` is its `participant_pk`.
    private var namesRowByParticipant = false

    func problem(_ column: String, expected: String) -> CohortError {
        if namesRowByParticipant { return Self.recordProblem(participantPK: rowID, column: column, expected: expected, file: file) }
        return Self.problem(table: table, rowID: rowID, column: column, expected: expected, file: file)
    }

    /// The error for a column of row `rowID` of `table` that is not what `expected` says (also
    /// for checks after decoding: a sealed value that does not open).
    static func problem(table: String, rowID: Int64?, column: String, expected: String, file: String = SQLiteStudyStore.fileName) -> CohortError {
        malformedColumn(table: table, rowID: rowID, column: column, expected: expected, file: file, backup: "study.db")
    }

    /// The error for a column of a `records` row that is not what `expected` says. `records` has
    /// no rowid (it is clustered on its key, migration `v6-records-by-key`), so the row is named
    /// by its participant row (`participant_pk`, nil when that column is itself unreadable) —
    /// never by its start, source or any other value.
    static func recordProblem(participantPK: Int64?, column: String, expected: String, file: String = SQLiteStudyStore.fileName) -> CohortError {
        malformedColumn(
            table: "records", row: "row of participant \(participantPK.map(String.init) ?? "?")", column: column, expected: expected, file: file,
            backup: "study.db")
    }

    func value(_ column: String) -> DatabaseValue { (row[column] as DatabaseValue?) ?? .null }

    func hasColumn(_ column: String) -> Bool { row.hasColumn(column) }

    func optionalString(_ column: String) throws -> String? {
        switch value(column).storage {
        case .null: return nil
        case let .string(text): return text
        default: throw problem(column, expected: "text")
        }
    }

    func optionalInt64(_ column: String) throws -> Int64? {
        switch value(column).storage {
        case .null: return nil
        case let .int64(n): return n
        default: throw problem(column, expected: "an integer")
        }
    }

    func optionalDouble(_ column: String) throws -> Double? {
        switch value(column).storage {
        case .null: return nil
        case let .double(x): return x
        case let .int64(n): return Double(n)
        default: throw problem(column, expected: "a number")
        }
    }

    func optionalBytes(_ column: String) throws -> [UInt8]? {
        switch value(column).storage {
        case .null: return nil
        case let .blob(data): return Array(data)
        default: throw problem(column, expected: "binary data")
        }
    }

    /// SQLite has no boolean: 0 or 1.
    func bool(_ column: String) throws -> Bool {
        switch try int64(column) {
        case 0: return false
        case 1: return true
        default: throw problem(column, expected: "0 or 1")
        }
    }
}
