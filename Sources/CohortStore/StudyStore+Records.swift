public import CohortCore
public import Foundation
import GRDB

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
public final class RecordInserter {
    let statement: Statement
    let batchID: Int64
    let db: Database

    init(db: Database, batchID: Int64) throws {
        self.db = db
        self.batchID = batchID
        statement = try db.makeStatement(
            sql: """
                INSERT INTO records (participant_pk, kind, start_ms, start_offset, end_ms, end_offset, value, text, source, note, batch_id)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                """)
    }

    /// Inserts `record` for participant row `participantPK`; false when the same record (same
    /// participant, kind, start and source) is already stored.
    public func insert(_ record: CohortCore.Record, participantPK: Int64) throws -> Bool {
        statement.setUncheckedArguments([
            participantPK, record.kind.rawValue, record.start.epochMilliseconds, Int64(record.start.utcOffsetSeconds),
            record.end?.epochMilliseconds, record.end.map { Int64($0.utcOffsetSeconds) }, record.value, record.text, record.source ?? "",
            record.note, batchID,
        ])
        try statement.execute()
        return db.changesCount > 0
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
