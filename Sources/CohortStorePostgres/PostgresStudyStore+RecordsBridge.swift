// BRIDGE (not for main): the two things the records path needs from the "pgcore" half of the
// PostgreSQL store — appending an audit event inside the caller's transaction under the audit
// advisory lock, and the note sealing both stores share — so the records methods and their tests
// run on this branch alone. When pgcore's branch is merged, delete this file and point the two
// call sites (PostgresStudyStore+Records.swift: `appendEvent(conn, …)`; PostgresRecordSink.swift
// and +Records: `PIISealing.sealNote`/`openNote`, named as pgcore's shared CohortStore type is)
// resolve to pgcore's versions unchanged.
import CohortCore
import CohortCrypto
import CohortPostgres
import CohortStore
import Foundation

extension PostgresStudyStore {
    /// Appends an audit event inside the caller's transaction (the actor as a redactable text),
    /// taking the audit advisory lock right before reading the head.
    func appendEvent(
        _ conn: PostgresConnection, actor: String, action: String, subject: String?, details: [String: String], at: Date
    ) throws -> AuditEvent {
        try conn.query("SELECT pg_advisory_xact_lock(\(Self.auditLockKey))")
        var seq: Int64 = 1
        var prev = AuditEvent.genesisHash
        if let last = try conn.query("SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1").first,
            let s = last[0].flatMap({ Int64($0) }), let h = last[1]
        {
            seq = s + 1
            prev = h
        }
        let instant = Timestamp(at, in: .gmt).iso8601
        let salt = try SecureRandom.bytes(16)
        let digest = SHA256.hex(salt + Array(actor.utf8))
        let sealed = try AESGCM.seal(Array(actor.utf8), key: piiKey, authenticating: Array("redactable:\(digest)".utf8))
        try conn.command(
            "INSERT INTO redactable_texts (digest, participant_id, salt, text_enc) VALUES ($1, NULL, $2, $3)",
            values: [.text(digest), .bytes(salt), .bytes(sealed)])
        let committedActor = "redactable:" + digest
        let input = try AuditEvent.hashInput(
            seq: seq, at: instant, actor: committedActor, action: action, subject: subject, details: details, prevHash: prev)
        let hash = SHA256.hex(input)
        let detailsJSON = String(decoding: try CanonicalJSON.encode(details), as: UTF8.self)
        try conn.command(
            "INSERT INTO audit_events (seq, at, actor, action, subject, details, details_text, prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $6, $7, $8)",
            values: [.int(seq), .text(instant), .text(committedActor), .text(action), .optional(subject), .text(detailsJSON), .text(prev), .text(hash)])
        var event = AuditEvent(
            seq: seq, at: instant, actor: committedActor, action: action, subject: subject, details: details, prevHash: prev, hash: hash)
        event.revealed = ["actor": actor]
        return event
    }
}

/// Note sealing as the SQLite store has it (pgcore's shared `PIISealing` replaces this).
enum PIISealing {
    /// The associated data of a note, as the SQLite store has it: the record's unique key and the field.
    static func noteAAD(participantPK: Int64, kind: String, startMs: Int64, source: String) -> [UInt8] {
        Array("record:\(participantPK):\(kind):\(startMs):\(source):note".utf8)
    }

    static func sealNote(_ note: String, key: [UInt8], participantPK: Int64, kind: String, startMs: Int64, source: String) throws -> [UInt8] {
        try AESGCM.seal(Array(note.utf8), key: key, authenticating: noteAAD(participantPK: participantPK, kind: kind, startMs: startMs, source: source))
    }

    static func openNote(_ sealed: [UInt8], key: [UInt8], participantPK: Int64, kind: String, startMs: Int64, source: String) throws -> String {
        String(
            decoding: try AESGCM.open(sealed, key: key, authenticating: noteAAD(participantPK: participantPK, kind: kind, startMs: startMs, source: source)),
            as: UTF8.self)
    }
}
