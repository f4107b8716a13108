public import CohortCore
public import CohortCrypto
public import Foundation
import GRDB

extension StudyStore {
    /// Appends an event inside the caller's transaction and returns it.
    @discardableResult
    static func appendEvent(_ db: Database, actor: String, action: String, subject: String?, details: [String: String], at: Date)
        throws -> AuditEvent
    {
        let last = try Row.fetchOne(db, sql: "SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1")
        let seq: Int64 = (last?["seq"] as Int64? ?? 0) + 1
        let prev: String = last?["hash"] ?? AuditEvent.genesisHash
        let instant = isoNow(at)
        let input = try AuditEvent.hashInput(seq: seq, at: instant, actor: actor, action: action, subject: subject, details: details, prevHash: prev)
        let hash = SHA256.hex(input)
        let detailsJSON = String(decoding: try CanonicalJSON.encode(details), as: UTF8.self)
        try db.execute(
            sql: "INSERT INTO audit_events (seq, at, actor, action, subject, details, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            arguments: [seq, instant, actor, action, subject, detailsJSON, prev, hash])
        return AuditEvent(seq: seq, at: instant, actor: actor, action: action, subject: subject, details: details, prevHash: prev, hash: hash)
    }

    /// Appends an event in its own transaction.
    @discardableResult
    public func appendEvent(actor: String, action: String, subject: String? = nil, details: [String: String] = [:], at: Date) throws -> AuditEvent {
        try write { db in try Self.appendEvent(db, actor: actor, action: action, subject: subject, details: details, at: at) }
    }

    /// Signs the current head of the chain and stores the checkpoint; returns it (nil for an empty chain).
    @discardableResult
    public func checkpoint(signingKey: Ed25519PrivateKey, at: Date) throws -> AuditCheckpoint? {
        try write { db in
            guard let head = try Row.fetchOne(db, sql: "SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1") else { return nil }
            let seq: Int64 = head["seq"]
            let hash: String = head["hash"]
            if let existing = try Row.fetchOne(db, sql: "SELECT signature FROM audit_checkpoints WHERE seq = ?", arguments: [seq]),
                let signature: String = existing["signature"]
            {
                return AuditCheckpoint(seq: seq, headHash: hash, signature: signature)
            }
            let signature = Base64.encode(try signingKey.signature(for: AuditCheckpoint.message(seq: seq, headHash: hash)))
            let instant = Self.isoNow(at)
            try db.execute(
                sql: "INSERT INTO audit_checkpoints (seq, head_hash, signature, at) VALUES (?, ?, ?, ?)",
                arguments: [seq, hash, signature, instant])
            return AuditCheckpoint(seq: seq, headHash: hash, signature: signature)
        }
    }

    /// The newest checkpoint, if any.
    public func latestCheckpoint() throws -> AuditCheckpoint? {
        try read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT seq, head_hash, signature FROM audit_checkpoints ORDER BY seq DESC LIMIT 1") else { return nil }
            return AuditCheckpoint(seq: row["seq"], headHash: row["head_hash"], signature: row["signature"])
        }
    }

    /// Events with `seq >= since`, oldest first.
    public func auditEvents(since: Int64 = 1, limit: Int? = nil) throws -> [AuditEvent] {
        try read { db in
            var sql = "SELECT * FROM audit_events WHERE seq >= ? ORDER BY seq"
            if let limit { sql += " LIMIT \(limit)" }
            return try Row.fetchAll(db, sql: sql, arguments: [since]).map(Self.event(from:))
        }
    }

    static func event(from row: Row) -> AuditEvent {
        let detailsText: String = row["details"] ?? "{}"
        let details = (try? JSONDecoder().decode([String: String].self, from: Data(detailsText.utf8))) ?? ["_unreadable": "true"]
        return AuditEvent(
            seq: row["seq"], at: row["at"], actor: row["actor"], action: row["action"], subject: row["subject"], details: details,
            prevHash: row["prev_hash"], hash: row["hash"])
    }

    /// Recomputes every hash and link, and checks every checkpoint signature and head, naming the
    /// first broken event. Streams the table (flat memory).
    public func verifyAudit(publicKey: Ed25519PublicKey) throws -> AuditVerification {
        try read { db in
            var expectedSeq: Int64 = 1
            var prev = AuditEvent.genesisHash
            var count = 0
            var problem: String?
            var brokenAt: Int64?
            let cursor = try Row.fetchCursor(db, sql: "SELECT * FROM audit_events ORDER BY rowid")
            var lastSeq: Int64 = 0
            while let row = try cursor.next() {
                count += 1
                let seq: Int64 = row["seq"]
                lastSeq = seq
                guard problem == nil else { continue }
                let detailsText: String = row["details"] ?? ""
                guard let details = try? JSONDecoder().decode([String: String].self, from: Data(detailsText.utf8)) else {
                    problem = "event \(seq): its details are not valid JSON (edited?)"
                    brokenAt = seq
                    continue
                }
                if seq != expectedSeq {
                    problem = seq > expectedSeq
                        ? "event \(expectedSeq) is missing (deleted?): the chain jumps from \(expectedSeq - 1) to \(seq)"
                        : "event \(seq) is out of order (reordered or duplicated?)"
                    brokenAt = min(seq, expectedSeq)
                    continue
                }
                let storedPrev: String = row["prev_hash"]
                if storedPrev != prev {
                    problem = "event \(seq): its previous-hash does not link to event \(seq - 1) (an earlier event was changed or removed)"
                    brokenAt = seq
                    continue
                }
                let input = try AuditEvent.hashInput(
                    seq: seq, at: row["at"], actor: row["actor"], action: row["action"], subject: row["subject"], details: details, prevHash: prev)
                let hash = SHA256.hex(input)
                let stored: String = row["hash"]
                if hash != stored {
                    problem = "event \(seq): its content does not match its hash (edited?)"
                    brokenAt = seq
                    continue
                }
                prev = hash
                expectedSeq += 1
            }
            var checkpoints = 0
            for row in try Row.fetchAll(db, sql: "SELECT seq, head_hash, signature FROM audit_checkpoints ORDER BY seq") {
                checkpoints += 1
                guard problem == nil else { break }
                let cp = AuditCheckpoint(seq: row["seq"], headHash: row["head_hash"], signature: row["signature"])
                let signature = Base64.decode(cp.signature) ?? []
                if !publicKey.isValidSignature(signature, for: cp.signedBytes) {
                    problem = "checkpoint at event \(cp.seq): its signature does not verify with the study key"
                    brokenAt = cp.seq
                    break
                }
                guard let eventHash = try String.fetchOne(db, sql: "SELECT hash FROM audit_events WHERE seq = ?", arguments: [cp.seq]) else {
                    problem = "event \(cp.seq) is missing: a signed checkpoint covers it (events after \(lastSeq) were deleted?)"
                    brokenAt = cp.seq
                    break
                }
                if eventHash != cp.headHash {
                    problem = "event \(cp.seq): differs from the signed checkpoint of the chain at that point"
                    brokenAt = cp.seq
                    break
                }
            }
            return AuditVerification(
                events: count, checkpoints: checkpoints, headSeq: lastSeq, headHash: prev, firstProblem: problem, brokenAtSeq: brokenAt)
        }
    }
}
