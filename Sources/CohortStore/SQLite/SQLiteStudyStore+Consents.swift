public import CohortCore
import CohortCrypto
public import Foundation
import GRDB

extension SQLiteStudyStore {
    /// Stores a consent row (the signature evidence encrypted) and marks `supersede` rows
    /// superseded, in one transaction with its audit event.
    public func recordConsent(
        _ consent: Consent, participant: ParticipantHandle, signatureEvidence: String?, supersede: [UUID], actor: String, at: Date
    ) throws {
        let participantPK = participant.rowKey
        try write { db in
            let id = consent.id.uuidString.lowercased()
            let evidence = try signatureEvidence.map { Data(try PIISealing.sealSignature($0, consentID: id, key: piiKey)) }
            try db.execute(
                sql: """
                    INSERT INTO consents (id, participant_pk, version, document_sha256, signed_at_ms, signed_offset, signature_kind, signature_enc,
                        sharing, status, recorded_at_ms, recorded_offset) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    id, participantPK, consent.version, consent.documentSHA256, consent.signedAt.epochMilliseconds, Int64(consent.signedAt.utcOffsetSeconds),
                    consent.signatureKind.rawValue, evidence, consent.sharing.rawValue, consent.status.rawValue, consent.recordedAt.epochMilliseconds,
                    Int64(consent.recordedAt.utcOffsetSeconds),
                ])
            for old in supersede {
                try db.execute(
                    sql: "UPDATE consents SET status = 'superseded' WHERE id = ? AND participant_pk = ? AND status = 'active'",
                    arguments: [old.uuidString.lowercased(), participantPK])
            }
            try appendEvent(
                db, actor: actor, action: "consent.record", subject: consent.participantID.uuidString.lowercased(),
                details: [
                    "consent_id": id, "version": consent.version, "document_sha256": consent.documentSHA256, "sharing": consent.sharing.rawValue,
                    "signature_kind": consent.signatureKind.rawValue, "superseded": String(supersede.count),
                ], at: at)
        }
    }

    /// One participant's consents, oldest first (as ``consentHistories()`` lists them).
    public func consentHistory(_ participant: ParticipantHandle, participantID: UUID) throws -> [Consent] {
        try read { db in
            try ConsentRow.fetchAll(
                db, sql: "SELECT *, rowid AS row_id FROM consents WHERE participant_pk = ? ORDER BY signed_at_ms, recorded_at_ms, rowid",
                arguments: [participant.rowKey]
            ).map { $0.consent(participantID: participantID) }
        }
    }

    /// The consent history of every participant, keyed by participant id, oldest first.
    public func consentHistories() throws -> [UUID: [Consent]] {
        try read { db in
            var ids: [Int64: UUID] = [:]
            for row in try ParticipantRow.fetchAll(db, sql: "SELECT * FROM participants") { ids[row.pk] = row.id }
            var result: [UUID: [Consent]] = [:]
            let rows = try ConsentRow.fetchAll(db, sql: "SELECT *, rowid AS row_id FROM consents ORDER BY signed_at_ms, recorded_at_ms, rowid")
            for row in rows {
                // The foreign key holds while foreign keys are on; a hand-edited file need not.
                guard let pid = ids[row.participantPK] else {
                    throw RowReader.problem(table: ConsentRow.databaseTableName, rowID: nil, column: "participant_pk", expected: "the key of a participant row")
                }
                result[pid, default: []].append(row.consent(participantID: pid))
            }
            return result
        }
    }

    /// The withdrawal of a participant, if any (the latest).
    public func withdrawal(_ participant: ParticipantHandle) throws -> StoredWithdrawal? {
        try read { db in
            guard
                let row = try WithdrawalRow.fetchOne(
                    db, sql: "SELECT *, rowid AS row_id FROM withdrawals WHERE participant_pk = ? ORDER BY at_ms DESC, rowid DESC LIMIT 1",
                    arguments: [participant.rowKey])
            else { return nil }
            return StoredWithdrawal(
                id: row.id, mode: row.mode, at: Timestamp(epochMilliseconds: row.atMs), by: row.byKind,
                actor: try revealRedactable(db, row.actor) ?? AuditEvent.redactedText,
                reason: try row.reason.map { try revealRedactable(db, $0) ?? AuditEvent.redactedText },
                consentVersion: row.consentVersion, counts: row.counts)
        }
    }

    /// Records a withdrawal in one transaction: participant status, the consent in force marked
    /// withdrawn, and for `erase` the records and identifiers deleted (consent rows and audit events
    /// stay). For an escalation the first withdrawal instant is kept.
    @discardableResult
    public func withdraw(
        _ participant: ParticipantHandle, participantID: UUID, mode: WithdrawalMode, at: Timestamp, by: String, actor: String, reason: String?,
        consentVersion: String?, receiptID: UUID
    ) throws -> WithdrawalCounts {
        let participantPK = participant.rowKey
        let counts = try write { db -> WithdrawalCounts in
            let records = try Int.fetchOne(db, sql: "SELECT count(*) FROM records WHERE participant_pk = ?", arguments: [participantPK]) ?? 0
            let consents = try Int.fetchOne(db, sql: "SELECT count(*) FROM consents WHERE participant_pk = ?", arguments: [participantPK]) ?? 0
            let counts = WithdrawalCounts(records: records, consents: consents, identifiersErased: mode == .erase)
            try db.execute(
                sql: """
                    UPDATE participants SET status = ?, withdrawn_at_ms = coalesce(withdrawn_at_ms, ?), withdrawn_offset = coalesce(withdrawn_offset, ?)
                    WHERE pk = ?
                    """, arguments: [mode.status.rawValue, at.epochMilliseconds, Int64(at.utcOffsetSeconds), participantPK])
            try db.execute(sql: "UPDATE consents SET status = 'withdrawn' WHERE participant_pk = ? AND status = 'active'", arguments: [participantPK])
            if mode == .erase {
                try db.execute(sql: "DELETE FROM records WHERE participant_pk = ?", arguments: [participantPK])
                let nulls = Self.identityColumns.map { "\($0) = NULL" }.joined(separator: ", ")
                let erasedCode = "ERASED-" + participantID.uuidString.lowercased().prefix(8)
                try db.execute(
                    sql: "UPDATE participants SET \(nulls), code = ?, token_salt = NULL, token_hash = NULL WHERE pk = ?",
                    arguments: [erasedCode, participantPK])
                try db.execute(sql: "UPDATE consents SET signature_enc = NULL WHERE participant_pk = ?", arguments: [participantPK])
            }
            var details = [
                "mode": mode.rawValue, "by": by, "records": String(records), "consents": String(consents), "receipt_id": receiptID.uuidString.lowercased(),
            ]
            if let consentVersion { details["consent_version"] = consentVersion }
            let pid = participantID.uuidString.lowercased()
            // The reason is free text a person typed: the chain commits to its salted hash, the
            // text is kept encrypted beside it, and an erase deletes it.
            let event = try appendEvent(
                db, actor: actor, action: "participant.withdraw", subject: pid, details: details, redactable: reason.map { ["reason": $0] } ?? [:],
                owner: pid, at: at.date)
            let countsJSON = String(decoding: try CanonicalJSON.encode(counts), as: UTF8.self)
            try db.execute(
                sql: "INSERT INTO withdrawals (id, participant_pk, mode, at_ms, by_kind, actor, reason, consent_version, counts_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                arguments: [
                    receiptID.uuidString.lowercased(), participantPK, mode.rawValue, at.epochMilliseconds, by, event.actor, event.details["reason"],
                    consentVersion, countsJSON,
                ])
            if mode == .erase { _ = try eraseRedactable(db, participantID: pid) }
            return counts
        }
        if mode == .erase { try checkpointAndTruncateLog() }
        return counts
    }
}
