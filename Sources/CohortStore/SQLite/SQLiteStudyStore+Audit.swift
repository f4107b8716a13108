public import CohortCore
import CohortCrypto
import Foundation
import GRDB

extension SQLiteStudyStore {

    /// The newest checkpoint, if any.
    public func latestCheckpoint() throws -> AuditCheckpoint? {
        try read { db in
            try AuditCheckpointRow.fetchOne(db, sql: "SELECT * FROM audit_checkpoints ORDER BY seq DESC LIMIT 1")?.checkpoint
        }
    }

    /// The newest event's number and hash, or nil for an empty chain.
    public func auditHead() throws -> (seq: Int64, hash: String)? {
        try read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1") else { return nil }
            let reader = RowReader(row, table: "audit_events", file: url.path, rowIDColumn: "seq")
            return (try reader.int64("seq"), try reader.string("hash"))
        }
    }

    /// The hash of event `seq`, or nil when the database holds no such event.
    public func auditEventHash(seq: Int64) throws -> String? {
        try read { db in
            try Row.fetchOne(db, sql: "SELECT seq, hash FROM audit_events WHERE seq = ?", arguments: [seq]).map {
                try RowReader($0, table: "audit_events", file: url.path, rowIDColumn: "seq").string("hash")
            }
        }
    }

    /// True when the chain records that this workspace keeps its head in an `audit.head` file
    /// (every workspace made or upgraded by a cohort that writes one).
    public func auditHeadFileEstablished() throws -> Bool {
        try read { db in
            try Bool.fetchOne(
                db, sql: "SELECT 1 FROM audit_events WHERE action = 'audit.head.create' OR (action = 'workspace.init' AND details LIKE '%\"audit_head\"%') LIMIT 1")
                ?? false
        }
    }

    /// Events with `seq >= since`, oldest first, with their redactable texts revealed (unless
    /// `revealing` is false: the key check reads events before it knows `pii.key` is the right one).
    public func auditEvents(since: Int64, limit: Int?, revealing: Bool) throws -> [AuditEvent] {
        try read { db in
            var sql = "SELECT * FROM audit_events WHERE seq >= ? ORDER BY seq"
            if let limit { sql += " LIMIT \(limit)" }
            return try AuditEventRow.fetchAll(db, sql: sql, arguments: [since]).map { row in
                var event = row.event
                if revealing { try event.reveal { try revealRedactable(db, $0) } }
                return event
            }
        }
    }

    /// Recomputes every hash and link, and checks every checkpoint signature and head, naming the
    /// first broken event (see ``AuditChain/verify(nextEvent:checkpoints:eventHash:signers:)``).
    /// Streams the table in rowid order (flat memory), so a reordering shows. Redactable texts are
    /// not needed: the chain commits to their salted hashes, so an erase leaves it intact.
    public func verifyAudit(signers: CheckpointSigners) throws -> AuditVerification {
        try read { db in
            let cursor = try Row.fetchCursor(db, sql: "SELECT * FROM audit_events ORDER BY rowid")
            let checkpoints = try Row.fetchAll(db, sql: "SELECT * FROM audit_checkpoints ORDER BY seq").map { try? AuditCheckpointRow(row: $0).checkpoint }
            return try AuditChain.verify(
                nextEvent: {
                    guard let row = try cursor.next() else { return nil }
                    return AuditChain.storedEvent(RowReader(row, table: "audit_events", file: url.path, rowIDColumn: "seq"))
                },
                checkpoints: checkpoints,
                eventHash: { seq in try String.fetchOne(db, sql: "SELECT hash FROM audit_events WHERE seq = ?", arguments: [seq]) },
                signers: signers)
        }
    }
}
