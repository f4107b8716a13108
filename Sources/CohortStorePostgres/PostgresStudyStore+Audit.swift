public import CohortCore
import CohortCrypto
import CohortPostgres
public import CohortStore
import Foundation

/// The audit chain on PostgreSQL. One writer at a time appends: the server's `cohort_append_event`
/// takes the chain's lock (see ``lockAuditChain(_:)``) right before it reads the head, so the rest
/// of a transaction (an import's COPY, an erase's deletes) runs in parallel with other
/// coordinators, and the lock is released only when the transaction ends: the next appender
/// reads a head that is committed.
extension PostgresStudyStore {
    static let eventColumns = "seq, at, actor, action, subject, details_text, prev_hash, hash"

    /// Takes the audit-chain lock for the rest of the transaction (re-entrant within it): a
    /// `SHARE ROW EXCLUSIVE` lock on `audit_events`, taken by the server's function
    /// `cohort_lock_audit_chain` (no site role can lock the table itself, or take the lock in a
    /// way that other coordinators' appends would not also need).
    func lockAuditChain(_ conn: PostgresConnection) throws {
        try conn.query("SELECT cohort_lock_audit_chain()")
    }

    /// The chain's head (seq, hash), or nil when empty, in `conn`'s transaction.
    func head(_ conn: PostgresConnection) throws -> (seq: Int64, hash: String)? {
        let selected = "seq, hash"
        guard let row = try rows(conn, "SELECT \(selected) FROM audit_events ORDER BY seq DESC LIMIT 1", selected: selected,
            table: "audit_events", rowIDColumn: "seq").first
        else { return nil }
        return (try row.int64("seq"), try row.string("hash"))
    }

    func checkpoints(_ conn: PostgresConnection, _ condition: String, _ values: [PostgresValue] = []) throws -> [AuditCheckpoint] {
        let selected = "seq, head_hash, signature, at"
        return try rows(conn, "SELECT \(selected) FROM audit_checkpoints \(condition)", values, selected: selected, table: "audit_checkpoints",
            rowIDColumn: "seq").map { try AuditCheckpointRow($0).checkpoint }
    }

    /// The newest checkpoint, if any.
    public func latestCheckpoint() throws -> AuditCheckpoint? {
        try reading { conn in try checkpoints(conn, "ORDER BY seq DESC LIMIT 1").first }
    }

    /// The newest event's number and hash, or nil for an empty chain.
    public func auditHead() throws -> (seq: Int64, hash: String)? {
        try reading { conn in try head(conn) }
    }

    /// The hash of event `seq`, or nil when the database holds no such event.
    public func auditEventHash(seq: Int64) throws -> String? {
        try reading { conn in
            try rows(conn, "SELECT seq, hash FROM audit_events WHERE seq = $1", [.int(seq)], selected: "seq, hash", table: "audit_events",
                rowIDColumn: "seq").first?.string("hash")
        }
    }

    /// True when the chain records that this workspace keeps its head in an `audit.head` file.
    public func auditHeadFileEstablished() throws -> Bool {
        try reading { conn in
            !(try conn.query(
                """
                SELECT 1 FROM audit_events
                WHERE action = 'audit.head.create' OR (action = 'workspace.init' AND details_text LIKE '%"audit_head"%') LIMIT 1
                """)).isEmpty
        }
    }

    /// An event of a row selected with ``eventColumns``, its details read from the committed text.
    func event(_ row: PostgresRow) throws -> AuditEvent {
        try AuditEventRow(row, detailsColumn: "details_text").event
    }

    /// Events matching `condition` (SQL after WHERE), oldest first, with their redactable texts
    /// revealed when `revealing`.
    func events(_ conn: PostgresConnection, where condition: String, _ values: [PostgresValue], limit: Int? = nil, revealing: Bool) throws
        -> [AuditEvent]
    {
        var sql = "SELECT \(Self.eventColumns) FROM audit_events WHERE \(condition) ORDER BY seq"
        if let limit { sql += " LIMIT \(max(limit, 0))" }
        var events = try rows(conn, sql, values, selected: Self.eventColumns, table: "audit_events", rowIDColumn: "seq").map(event)
        guard revealing else { return events }
        let texts = try revealRedactable(conn, events.flatMap { [$0.actor] + $0.details.values })
        for i in events.indices { try events[i].reveal { texts[$0] } }
        return events
    }

    /// Events with `seq >= since`, oldest first, with their redactable texts revealed (unless
    /// `revealing` is false: the key check reads events before it knows `pii.key` is the right one).
    public func auditEvents(since: Int64, limit: Int?, revealing: Bool) throws -> [AuditEvent] {
        try reading { conn in try events(conn, where: "seq >= $1", [.int(since)], limit: limit, revealing: revealing) }
    }

    /// Recomputes every hash and link and checks every checkpoint (see `AuditChain.verify`),
    /// streaming the events through a server-side cursor in seq order, 1,000 at a time. A row
    /// whose searchable `details` (jsonb) differ from the committed `details_text` is reported
    /// as edited: the export and withdrawal look-ups read the jsonb.
    public func verifyAudit(signers: CheckpointSigners) throws -> AuditVerification {
        try reading { conn in
            let selected = Self.eventColumns + ", details::text AS details_json"
            try conn.query("DECLARE cohort_verify NO SCROLL CURSOR FOR SELECT \(selected) FROM audit_events ORDER BY seq")
            var buffer: [PostgresRow] = []
            var index = 0
            var exhausted = false
            let checkpointRows = try rows(
                conn, "SELECT seq, head_hash, signature, at FROM audit_checkpoints ORDER BY seq", selected: "seq, head_hash, signature, at",
                table: "audit_checkpoints", rowIDColumn: "seq")
            let checkpoints: [AuditCheckpoint?] = checkpointRows.map { try? AuditCheckpointRow($0).checkpoint }
            var verification = try AuditChain.verify(
                nextEvent: {
                    if index == buffer.count {
                        guard !exhausted else { return nil }
                        buffer = try rows(conn, "FETCH 1000 FROM cohort_verify", selected: selected, table: "audit_events", rowIDColumn: "seq")
                        index = 0
                        exhausted = buffer.count < 1000
                        if buffer.isEmpty { return nil }
                    }
                    let row = buffer[index]
                    index += 1
                    let stored = AuditChain.storedEvent(row, detailsColumn: "details_text")
                    // The look-ups search the jsonb copy: it must say what the hash commits to.
                    if case let .event(event) = stored, (try? row.stringMap("details_json")) != event.details {
                        return .malformed(seq: event.seq, problem: "its searchable details differ from the details its hash commits to")
                    }
                    return stored
                },
                checkpoints: checkpoints,
                eventHash: { seq in
                    try rows(conn, "SELECT seq, hash FROM audit_events WHERE seq = $1", [.int(seq)], selected: "seq, hash", table: "audit_events",
                        rowIDColumn: "seq").first?.string("hash")
                },
                signers: signers)
            // A checkpoint that does not verify was stored through cohort_append_checkpoint, which
            // records the login role: name it, so the owner knows whom to ask before deleting it.
            if verification.checkpointSignatureFailed, let problem = verification.firstProblem, let seq = verification.brokenAtSeq,
                let writer = try conn.query("SELECT written_by FROM audit_checkpoints WHERE seq = $1", values: [.int(seq)]).first?.first ?? nil
            {
                verification.firstProblem = problem + " (stored by database role \(writer); the owner can delete the row after review: DELETE FROM audit_checkpoints WHERE seq = \(seq))"
            }
            return verification
        }
    }
}
