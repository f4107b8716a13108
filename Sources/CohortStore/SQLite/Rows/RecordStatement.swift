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
/// missing or malformed value throws ``RowReader/recordProblem(participantPK:column:expected:file:)``
/// with the table, row (by its participant row: `records` has no rowid) and column, never the
/// value — so a row reads the same either way (a test compares the two on every row of a study).
struct RecordStatement {
    /// The columns ``row()`` reads, in this order (the indexes below).
    static let columns = "participant_pk, kind, start_ms, start_offset, end_ms, end_offset, value, text, source, note_enc"
    /// The columns ``startAndSource()`` reads: the first six of ``columns``, then the source
    /// (no value, text or note).
    static let startAndSourceColumns = "participant_pk, kind, start_ms, start_offset, end_ms, end_offset, source"

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
        let (participantPK, kind, start, end) = try head()
        func problem(_ column: String, _ expected: String) -> CohortError {
            RowReader.recordProblem(participantPK: participantPK, column: column, expected: expected)
        }
        var value: Double?
        let valueColumn = column(6)
        switch sqlite3_value_type(valueColumn) {
        case SQLITE_NULL: value = nil
        case SQLITE_FLOAT, SQLITE_INTEGER: value = sqlite3_value_double(valueColumn)
        default: throw problem("value", "a number")
        }
        var text: String?
        let textColumn = column(7)
        switch sqlite3_value_type(textColumn) {
        case SQLITE_NULL: text = nil
        case SQLITE_TEXT: text = lastText.string(textColumn)
        default: throw problem("text", "text")
        }
        let source = try source(8, participantPK: participantPK)
        var sealedNote: [UInt8]?
        let noteColumn = column(9)
        switch sqlite3_value_type(noteColumn) {
        case SQLITE_NULL: sealedNote = nil
        case SQLITE_BLOB:
            // The blob before its length, as SQLite asks (`sqlite3_column_blob`'s documentation).
            let blob = sqlite3_value_blob(noteColumn)
            let count = Int(sqlite3_value_bytes(noteColumn))
            if count > 0, let blob {
                sealedNote = Array(UnsafeRawBufferPointer(start: blob, count: count))
            } else {
                sealedNote = []
            }
        default: throw problem("note_enc", "binary data")
        }
        return RecordRow(
            participantPK: participantPK, kind: kind, start: start, end: end, value: value, text: text, source: source, sealedNote: sealedNote,
            batchID: nil)
    }

    /// The row the statement (over ``startAndSourceColumns``) stands on: participant, kind,
    /// start, end and source, decoded as ``row()`` decodes them.
    mutating func startAndSource() throws -> (participantPK: Int64, kind: RecordKind, start: Timestamp, end: Timestamp?, source: String) {
        let (participantPK, kind, start, end) = try head()
        return (participantPK, kind, start, end, try source(6, participantPK: participantPK))
    }

    /// Column `index` of the row the statement stands on, read through the value API: one
    /// `sqlite3_column_value` per column, then its type and content from that value, instead of a
    /// `sqlite3_column_type` and a `sqlite3_column_int64`/`_text`/… per column, each of which
    /// finds the column again and runs SQLite's API-exit check (about 3 % of the CSV + JSON
    /// export's CPU at bench M; issue 28, eighth round). Same checks, same conversions: SQLite's
    /// `sqlite3_column_X(stmt, i)` is `sqlite3_value_X` of that column's value. SQLite calls such
    /// a value unprotected — not to be read from two threads at once — and a reader's statement
    /// is used by one thread at a time (``StoreRecordReader``); it is valid until the next step,
    /// and each is read before that.
    @inline(__always)
    private func column(_ index: CInt) -> OpaquePointer? {
        sqlite3_column_value(stmt, index)
    }

    /// Columns 0–5, which both column lists share: participant, kind, start and end.
    private mutating func head() throws -> (participantPK: Int64, kind: RecordKind, start: Timestamp, end: Timestamp?) {
        let participantPK = try int64(0, "participant_pk", participantPK: nil)
        let kind: RecordKind
        if let oneKind {
            kind = oneKind
        } else {
            kind = try self.kind(participantPK: participantPK)
            if selectsOneKind { oneKind = kind }
        }
        let start = Timestamp(
            epochMilliseconds: try int64(2, "start_ms", participantPK: participantPK),
            utcOffsetSeconds: try offset(3, "start_offset", participantPK: participantPK))
        let endColumn = column(4)
        switch sqlite3_value_type(endColumn) {
        case SQLITE_NULL: return (participantPK, kind, start, nil)
        case SQLITE_INTEGER:
            return (
                participantPK, kind, start,
                Timestamp(epochMilliseconds: sqlite3_value_int64(endColumn), utcOffsetSeconds: try offset(5, "end_offset", participantPK: participantPK))
            )
        default: throw RowReader.recordProblem(participantPK: participantPK, column: "end_ms", expected: "an integer")
        }
    }

    /// A UTC offset in seconds at column `index` (within ±18 hours).
    private func offset(_ index: CInt, _ column: String, participantPK: Int64) throws -> Int32 {
        let n = try int64(index, column, participantPK: participantPK)
        guard abs(n) <= 18 * 3600 else {
            throw RowReader.recordProblem(participantPK: participantPK, column: column, expected: "a UTC offset in seconds (within ±18 hours)")
        }
        return Int32(n)
    }

    /// The source at column `index` (text, empty when none).
    private mutating func source(_ index: CInt, participantPK: Int64) throws -> String {
        let value = column(index)
        let type = sqlite3_value_type(value)
        guard type == SQLITE_TEXT else {
            throw RowReader.recordProblem(participantPK: participantPK, column: "source", expected: type == SQLITE_NULL ? "text, found nothing" : "text")
        }
        return lastSource.string(value)
    }

    private func int64(_ index: CInt, _ column: String, participantPK: Int64?) throws -> Int64 {
        let value = self.column(index)
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return sqlite3_value_int64(value)
        case SQLITE_NULL:
            throw RowReader.recordProblem(participantPK: participantPK, column: column, expected: "an integer, found nothing")
        default: throw RowReader.recordProblem(participantPK: participantPK, column: column, expected: "an integer")
        }
    }

    private func kind(participantPK: Int64) throws -> RecordKind {
        let value = column(1)
        switch sqlite3_value_type(value) {
        case SQLITE_TEXT: break
        case SQLITE_NULL: throw RowReader.recordProblem(participantPK: participantPK, column: "kind", expected: "text, found nothing")
        default: throw RowReader.recordProblem(participantPK: participantPK, column: "kind", expected: "text")
        }
        if let text = sqlite3_value_text(value), case let count = ReusedText.length(text, sqlite3_value_bytes(value)), count > 0 {
            for entry in Self.kindNames where entry.bytes.count == count {
                if ReusedText.equal(entry.bytes, text, count) { return entry.kind }
            }
        }
        throw RowReader.recordProblem(
            participantPK: participantPK, column: "kind", expected: "one of " + RecordKind.allCases.map(\.rawValue).joined(separator: ", "))
    }
}

/// The last text read from a column and its bytes: the same bytes again give the same `String`
/// without decoding or allocating.
private struct ReusedText {
    private var bytes: [UInt8] = []
    private var string = ""

    /// The text of `value` (a column's, ``RecordStatement``).
    mutating func string(_ value: OpaquePointer?) -> String {
        guard let text = sqlite3_value_text(value), case let count = Self.length(text, sqlite3_value_bytes(value)), count > 0 else {
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
