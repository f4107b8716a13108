import CohortCore
import Foundation
import GRDB
import GRDBSQLite

/// Reads `records` rows for the export's hot path straight from a prepared statement, column by
/// column by index (`sqlite3_column_*`): no GRDB `Row`, no column-name lookup and no generic
/// `DatabaseValue` decoding per value, and no new `String` for a kind, text or source equal to
/// the previous row's (a participant's rows repeat a handful of them).
///
/// It decodes as strictly as ``RecordRow`` does — the same storage classes are accepted, and a
/// missing or malformed value throws ``RowReader/problem(table:rowID:column:expected:)`` with
/// the table, row and column, never the value — so a row reads the same either way (a test
/// compares the two on every row of a study).
struct RecordStatement {
    /// The columns ``row()`` reads, in this order (the indexes below).
    static let columns = "id, participant_pk, kind, start_ms, start_offset, end_ms, end_offset, value, text, source, note_enc"
    /// The columns ``startAndSource()`` reads: the first seven of ``columns``, then the source
    /// (no value, text or note).
    static let startAndSourceColumns = "id, participant_pk, kind, start_ms, start_offset, end_ms, end_offset, source"
    private static let table = RecordRow.databaseTableName

    private let stmt: SQLiteStatement
    /// Each kind's name as bytes, for the lookup without a `String`.
    private static let kindNames: [(bytes: [UInt8], kind: RecordKind)] = RecordKind.allCases.map { (Array($0.rawValue.utf8), $0) }
    private var lastText = ReusedText()
    private var lastSource = ReusedText()
    /// The kind of every row, once the first is decoded — for a statement that selects one kind
    /// (`kind = ?`: every row's kind has the first's type and bytes).
    private var oneKind: RecordKind?
    private let selectsOneKind: Bool

    /// `selectsOneKind`: the statement's rows all have one kind, decoded from the first row.
    init(_ statement: Statement, selectsOneKind: Bool = false) {
        stmt = statement.sqliteStatement
        self.selectsOneKind = selectsOneKind
    }

    /// The row the statement (over ``columns``) stands on, decoded (the note still sealed).
    mutating func row() throws -> RecordRow {
        let (id, participantPK, kind, start, end) = try head()
        func problem(_ column: String, _ expected: String) -> CohortError {
            RowReader.problem(table: Self.table, rowID: id, column: column, expected: expected)
        }
        var value: Double?
        switch sqlite3_column_type(stmt, 7) {
        case SQLITE_NULL: value = nil
        case SQLITE_FLOAT, SQLITE_INTEGER: value = sqlite3_column_double(stmt, 7)
        default: throw problem("value", "a number")
        }
        var text: String?
        switch sqlite3_column_type(stmt, 8) {
        case SQLITE_NULL: text = nil
        case SQLITE_TEXT: text = lastText.string(stmt, 8)
        default: throw problem("text", "text")
        }
        let source = try source(9, rowID: id)
        var sealedNote: [UInt8]?
        switch sqlite3_column_type(stmt, 10) {
        case SQLITE_NULL: sealedNote = nil
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(stmt, 10))
            if count == 0 {
                sealedNote = []
            } else if let blob = sqlite3_column_blob(stmt, 10) {
                sealedNote = Array(UnsafeRawBufferPointer(start: blob, count: count))
            } else {
                sealedNote = []
            }
        default: throw problem("note_enc", "binary data")
        }
        return RecordRow(
            id: id, participantPK: participantPK, kind: kind, start: start, end: end, value: value, text: text, source: source, sealedNote: sealedNote,
            batchID: nil)
    }

    /// The row the statement (over ``startAndSourceColumns``) stands on: id, participant, kind,
    /// start, end and source, decoded as ``row()`` decodes them.
    mutating func startAndSource() throws -> (id: Int64, participantPK: Int64, kind: RecordKind, start: Timestamp, end: Timestamp?, source: String) {
        let (id, participantPK, kind, start, end) = try head()
        return (id, participantPK, kind, start, end, try source(7, rowID: id))
    }

    /// Columns 0–6, which both column lists share: id, participant, kind, start and end.
    private mutating func head() throws -> (id: Int64, participantPK: Int64, kind: RecordKind, start: Timestamp, end: Timestamp?) {
        let id = try int64(0, "id")
        func offset(_ index: CInt, _ column: String) throws -> Int32 {
            let n = try int64(index, column, rowID: id)
            guard abs(n) <= 18 * 3600 else {
                throw RowReader.problem(table: Self.table, rowID: id, column: column, expected: "a UTC offset in seconds (within ±18 hours)")
            }
            return Int32(n)
        }
        let participantPK = try int64(1, "participant_pk", rowID: id)
        let kind: RecordKind
        if let oneKind {
            kind = oneKind
        } else {
            kind = try self.kind(rowID: id)
            if selectsOneKind { oneKind = kind }
        }
        let start = Timestamp(epochMilliseconds: try int64(3, "start_ms", rowID: id), utcOffsetSeconds: try offset(4, "start_offset"))
        switch sqlite3_column_type(stmt, 5) {
        case SQLITE_NULL: return (id, participantPK, kind, start, nil)
        case SQLITE_INTEGER:
            return (id, participantPK, kind, start, Timestamp(epochMilliseconds: sqlite3_column_int64(stmt, 5), utcOffsetSeconds: try offset(6, "end_offset")))
        default: throw RowReader.problem(table: Self.table, rowID: id, column: "end_ms", expected: "an integer")
        }
    }

    /// The source at column `index` (text, empty when none).
    private mutating func source(_ index: CInt, rowID: Int64) throws -> String {
        guard sqlite3_column_type(stmt, index) == SQLITE_TEXT else {
            throw RowReader.problem(
                table: Self.table, rowID: rowID, column: "source", expected: sqlite3_column_type(stmt, index) == SQLITE_NULL ? "text, found nothing" : "text")
        }
        return lastSource.string(stmt, index)
    }

    private func int64(_ index: CInt, _ column: String, rowID: Int64? = nil) throws -> Int64 {
        switch sqlite3_column_type(stmt, index) {
        case SQLITE_INTEGER: return sqlite3_column_int64(stmt, index)
        case SQLITE_NULL:
            throw RowReader.problem(table: Self.table, rowID: rowID, column: column, expected: "an integer, found nothing")
        default: throw RowReader.problem(table: Self.table, rowID: rowID, column: column, expected: "an integer")
        }
    }

    private func kind(rowID: Int64) throws -> RecordKind {
        switch sqlite3_column_type(stmt, 2) {
        case SQLITE_TEXT: break
        case SQLITE_NULL: throw RowReader.problem(table: Self.table, rowID: rowID, column: "kind", expected: "text, found nothing")
        default: throw RowReader.problem(table: Self.table, rowID: rowID, column: "kind", expected: "text")
        }
        if let text = sqlite3_column_text(stmt, 2), case let count = ReusedText.length(text, sqlite3_column_bytes(stmt, 2)), count > 0 {
            for entry in Self.kindNames where entry.bytes.count == count {
                if ReusedText.equal(entry.bytes, text, count) { return entry.kind }
            }
        }
        throw RowReader.problem(
            table: Self.table, rowID: rowID, column: "kind", expected: "one of " + RecordKind.allCases.map(\.rawValue).joined(separator: ", "))
    }
}

/// The last text read from a column and its bytes: the same bytes again give the same `String`
/// without decoding or allocating.
private struct ReusedText {
    private var bytes: [UInt8] = []
    private var string = ""

    mutating func string(_ stmt: SQLiteStatement, _ index: CInt) -> String {
        guard let text = sqlite3_column_text(stmt, index), case let count = Self.length(text, sqlite3_column_bytes(stmt, index)), count > 0 else {
            return ""
        }
        let same = bytes.count == count && Self.equal(bytes, text, count)
        if !same {
            let buffer = UnsafeBufferPointer(start: text, count: count)
            bytes.removeAll(keepingCapacity: true)
            bytes.append(contentsOf: buffer)
            string = String(decoding: buffer, as: UTF8.self)
        }
        return string
    }

    /// True when `bytes` (of `count` bytes) are the `count` bytes at `text`.
    static func equal(_ bytes: [UInt8], _ text: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in buffer.baseAddress.map { memcmp($0, text, count) == 0 } ?? (count == 0) }
    }

    /// The text's length up to its first NUL, as GRDB reads text (`String(cString:)`).
    static func length(_ text: UnsafePointer<UInt8>, _ bytes: CInt) -> Int {
        text.withMemoryRebound(to: CChar.self, capacity: Int(bytes)) { strnlen($0, Int(bytes)) }
    }
}
