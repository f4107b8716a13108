public import CohortCore
public import Foundation
import GRDB
import GRDBSQLite

/// What an import batch stored.
public struct ImportBatchResult: Sendable, Codable, Hashable {
    public var batchID: Int64
    public var rowsTotal: Int
    public var inserted: Int
    public var duplicates: Int
    public var rejected: Int

    public init(batchID: Int64, rowsTotal: Int, inserted: Int, duplicates: Int, rejected: Int) {
        self.batchID = batchID
        self.rowsTotal = rowsTotal
        self.inserted = inserted
        self.duplicates = duplicates
        self.rejected = rejected
    }

    enum CodingKeys: String, CodingKey {
        case inserted, duplicates, rejected
        case batchID = "batch_id"
        case rowsTotal = "rows_total"
    }
}

/// Inserts records inside an import transaction through one prepared statement.
///
/// The hot path of `cohort data import`: values are bound straight to the prepared SQLite
/// statement (no per-row `StatementArguments` boxing, text bound without copies) and the
/// statement is stepped directly. That is safe here because the statement runs inside the
/// transaction `importBatch` opened, the store registers no transaction observers, and the
/// statement is reset after every row.
public final class RecordInserter {
    let statement: Statement
    let batchID: Int64
    let db: Database
    /// The UTF-8 of the row's text columns, one after another, reused from row to row.
    private var text: [UInt8] = []

    init(db: Database, batchID: Int64) throws {
        self.db = db
        self.batchID = batchID
        statement = try db.makeStatement(
            sql: """
                INSERT INTO records (participant_pk, kind, start_ms, start_offset, end_ms, end_offset, value, text, source, note, batch_id)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                """)
        text.reserveCapacity(1024)
    }

    /// Inserts `record` for participant row `participantPK`; false when the same record (same
    /// participant, kind, start and source) is already stored.
    public func insert(_ record: CohortCore.Record, participantPK: Int64) throws -> Bool {
        // Text columns: kind, text, source (never NULL: '' when absent), note.
        text.removeAll(keepingCapacity: true)
        let kindRange = append(record.kind.rawValue)
        let textRange = record.text.map { append($0) }
        let sourceRange = append(record.source ?? "")
        let noteRange = record.note.map { append($0) }
        let stmt = statement.sqliteStatement
        let connection = db.sqliteConnection
        let code: CInt = text.withUnsafeBufferPointer { buffer in
            func bind(_ range: Range<Int>?, at index: CInt) {
                guard let range, let base = buffer.baseAddress else {
                    sqlite3_bind_null(stmt, index)
                    return
                }
                // SQLITE_STATIC (nil destructor): the buffer outlives the step below.
                (base + range.lowerBound).withMemoryRebound(to: CChar.self, capacity: range.count) {
                    _ = sqlite3_bind_text(stmt, index, $0, CInt(range.count), nil)
                }
            }
            sqlite3_bind_int64(stmt, 1, participantPK)
            bind(kindRange, at: 2)
            sqlite3_bind_int64(stmt, 3, record.start.epochMilliseconds)
            sqlite3_bind_int64(stmt, 4, Int64(record.start.utcOffsetSeconds))
            if let end = record.end {
                sqlite3_bind_int64(stmt, 5, end.epochMilliseconds)
                sqlite3_bind_int64(stmt, 6, Int64(end.utcOffsetSeconds))
            } else {
                sqlite3_bind_null(stmt, 5)
                sqlite3_bind_null(stmt, 6)
            }
            if let value = record.value { sqlite3_bind_double(stmt, 7, value) } else { sqlite3_bind_null(stmt, 7) }
            bind(textRange, at: 8)
            bind(sourceRange, at: 9)
            bind(noteRange, at: 10)
            sqlite3_bind_int64(stmt, 11, batchID)
            let code = sqlite3_step(stmt)
            sqlite3_reset(stmt)
            return code
        }
        guard code == SQLITE_DONE else {
            let message = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message)
        }
        return connection.map { sqlite3_changes($0) > 0 } ?? false
    }

    /// Appends `string`'s UTF-8 to the row buffer; its range there.
    private func append(_ string: String) -> Range<Int> {
        let start = text.count
        text.append(contentsOf: string.utf8)
        return start..<text.count
    }
}

/// The import file's description, for the batch row and audit event (no content).
public struct ImportBatchInfo: Sendable {
    public var fileName: String
    public var fileSHA256: String
    public var format: String
    public init(fileName: String, fileSHA256: String, format: String) {
        self.fileName = fileName
        self.fileSHA256 = fileSHA256
        self.format = format
    }
}

extension StudyStore {
    /// Runs `body` inside one transaction with an inserter for a new import batch: if `body`
    /// throws, nothing from the file is stored. Appends the `data.import` audit event.
    public func importBatch(
        _ info: ImportBatchInfo, actor: String, at: Date, body: (RecordInserter) throws -> (total: Int, inserted: Int, duplicates: Int, rejected: Int)
    ) throws -> ImportBatchResult {
        try write { db in
            try db.execute(
                sql: "INSERT INTO import_batches (file_name, file_sha256, format, imported_at, actor) VALUES (?, ?, ?, ?, ?)",
                arguments: [info.fileName, info.fileSHA256, info.format, Self.isoNow(at), actor])
            let batchID = db.lastInsertedRowID
            let inserter = try RecordInserter(db: db, batchID: batchID)
            let counts = try body(inserter)
            try db.execute(
                sql: "UPDATE import_batches SET rows_total = ?, rows_inserted = ?, rows_duplicate = ?, rows_rejected = ? WHERE id = ?",
                arguments: [counts.total, counts.inserted, counts.duplicates, counts.rejected, batchID])
            try Self.appendEvent(
                db, actor: actor, action: "data.import", subject: "batch-\(batchID)",
                details: [
                    "file_sha256": info.fileSHA256, "format": info.format, "rows": String(counts.total), "inserted": String(counts.inserted),
                    "duplicates": String(counts.duplicates), "rejected": String(counts.rejected),
                ], at: at)
            return ImportBatchResult(batchID: batchID, rowsTotal: counts.total, inserted: counts.inserted, duplicates: counts.duplicates, rejected: counts.rejected)
        }
    }

    /// Streams the records of one participant (ordered by start), without loading them all.
    public func forEachRecord(participantPK: Int64, participantID: UUID, _ body: (CohortCore.Record) throws -> Void) throws {
        try read { db in
            let cursor = try Row.fetchCursor(
                db, sql: "SELECT kind, start_ms, start_offset, end_ms, end_offset, value, text, source, note FROM records WHERE participant_pk = ? ORDER BY start_ms, kind",
                arguments: [participantPK])
            while let row = try cursor.next() {
                guard let kind = RecordKind(rawValue: row[0]) else { continue }
                let endMs: Int64? = row[3]
                let endOffset: Int32? = row[4]
                let source: String = row[7] ?? ""
                try body(
                    CohortCore.Record(
                        participantID: participantID, kind: kind, start: Timestamp(epochMilliseconds: row[1], utcOffsetSeconds: row[2]),
                        end: endMs.map { Timestamp(epochMilliseconds: $0, utcOffsetSeconds: endOffset ?? 0) }, value: row[5], text: row[6],
                        source: source.isEmpty ? nil : source, note: row[8]))
            }
        }
    }

    /// Streams (participant row, kind, start) of every record — what compliance needs.
    public func forEachRecordStart(_ body: (Int64, RecordKind, Timestamp) throws -> Void) throws {
        try read { db in
            let cursor = try Row.fetchCursor(db, sql: "SELECT participant_pk, kind, start_ms, start_offset FROM records")
            while let row = try cursor.next() {
                guard let kind = RecordKind(rawValue: row[1]) else { continue }
                try body(row[0], kind, Timestamp(epochMilliseconds: row[2], utcOffsetSeconds: row[3]))
            }
        }
    }

    /// Record counts: total, and per participant row.
    public func recordCount(participantPK: Int64? = nil) throws -> Int {
        try read { db in
            if let participantPK {
                return try Int.fetchOne(db, sql: "SELECT count(*) FROM records WHERE participant_pk = ?", arguments: [participantPK]) ?? 0
            }
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM records") ?? 0
        }
    }

    /// Counts of rows in the main tables (for summaries and `cohort status`).
    public func counts() throws -> [String: Int] {
        try read { db in
            var result: [String: Int] = [:]
            for table in ["participants", "consents", "records", "import_batches", "audit_events", "withdrawals"] {
                result[table] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0
            }
            return result
        }
    }
}
