public import CohortCore
import CohortPostgres
public import CohortStore
public import Foundation

/// Consents, withdrawals and erasure on PostgreSQL.
extension PostgresStudyStore {
    static let consentColumns =
        "c.recorded_order, p.id AS participant_id, c.id, c.version, c.document_sha256, c.signed_at_ms, c.signed_offset, c.signature_kind, c.sharing, c.status, c.recorded_at_ms, c.recorded_offset"

    /// Stores a consent row (the signature evidence sealed) and marks `supersede` rows superseded,
    /// in one transaction with its audit event.
    public func recordConsent(
        _ consent: Consent, participant: ParticipantHandle, signatureEvidence: String?, supersede: [UUID], actor: String, at: Date
    ) throws {
        try change { conn in
            let id = consent.id.uuidString.lowercased()
            let evidence = try signatureEvidence.map { try PIISealing.sealSignature($0, consentID: id, key: piiKey) }
            try conn.command(
                """
                INSERT INTO consents (id, participant_pk, version, document_sha256, signed_at_ms, signed_offset, signature_kind, signature_enc,
                    sharing, status, recorded_at_ms, recorded_offset) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
                """,
                values: [
                    .text(id), .int(participant.rowKey), .text(consent.version), .text(consent.documentSHA256), .int(consent.signedAt.epochMilliseconds),
                    .int(Int64(consent.signedAt.utcOffsetSeconds)), .text(consent.signatureKind.rawValue), .optional(evidence),
                    .text(consent.sharing.rawValue), .text(consent.status.rawValue), .int(consent.recordedAt.epochMilliseconds),
                    .int(Int64(consent.recordedAt.utcOffsetSeconds)),
                ])
            for old in supersede {
                try conn.command(
                    "UPDATE consents SET status = 'superseded' WHERE id = $1 AND participant_pk = $2 AND status = 'active'",
                    values: [.text(old.uuidString.lowercased()), .int(participant.rowKey)])
            }
            try appendEvent(
                conn, actor: actor, action: "consent.record", subject: consent.participantID.uuidString.lowercased(),
                details: [
                    "consent_id": id, "version": consent.version, "document_sha256": consent.documentSHA256, "sharing": consent.sharing.rawValue,
                    "signature_kind": consent.signatureKind.rawValue, "superseded": String(supersede.count),
                ], at: at)
        }
    }

    func consents(_ conn: PostgresConnection, _ condition: String, _ values: [PostgresValue]) throws -> [Consent] {
        let sql = """
            SELECT \(Self.consentColumns) FROM consents c JOIN participants p ON p.pk = c.participant_pk \(condition)
            ORDER BY c.signed_at_ms, c.recorded_at_ms, c.recorded_order
            """
        return try rows(conn, sql, values, selected: Self.consentColumns, table: "consents", rowIDColumn: "recorded_order").map { r in
            Consent(
                id: try r.uuid("id"), participantID: try r.uuid("participant_id"), version: try r.string("version"),
                documentSHA256: try r.string("document_sha256"),
                signedAt: Timestamp(epochMilliseconds: try r.int64("signed_at_ms"), utcOffsetSeconds: try r.offset("signed_offset")),
                signatureKind: try r.choice("signature_kind", SignatureKind.self), sharing: try r.sharingScope("sharing"),
                status: try r.choice("status", ConsentStatus.self),
                recordedAt: Timestamp(epochMilliseconds: try r.int64("recorded_at_ms"), utcOffsetSeconds: try r.offset("recorded_offset")))
        }
    }

    /// One participant's consents, oldest first (signing time, recording time, insertion).
    public func consentHistory(_ participant: ParticipantHandle, participantID: UUID) throws -> [Consent] {
        try reading { conn in try consents(conn, "WHERE c.participant_pk = $1", [.int(participant.rowKey)]) }
    }

    /// The consent history of every participant, keyed by participant id, oldest first.
    public func consentHistories() throws -> [UUID: [Consent]] {
        try reading { conn in
            var result: [UUID: [Consent]] = [:]
            for consent in try consents(conn, "", []) { result[consent.participantID, default: []].append(consent) }
            return result
        }
    }

    /// The withdrawal of a participant, if any (the latest).
    public func withdrawal(_ participant: ParticipantHandle) throws -> StoredWithdrawal? {
        try reading { conn in
            let selected = "recorded_order, id, mode, at_ms, by_kind, actor, reason, consent_version, counts_json"
            guard let r = try rows(conn, "SELECT \(selected) FROM withdrawals WHERE participant_pk = $1 ORDER BY at_ms DESC, recorded_order DESC LIMIT 1",
                [.int(participant.rowKey)], selected: selected, table: "withdrawals", rowIDColumn: "recorded_order").first
            else { return nil }
            let byKind = try r.string("by_kind")
            guard byKind == "participant" || byKind == "staff" else { throw r.problem("by_kind", expected: "one of participant, staff") }
            guard let counts = try? JSONDecoder().decode(WithdrawalCounts.self, from: Data(try r.string("counts_json").utf8)) else {
                throw r.problem("counts_json", expected: "a JSON object with records, consents and identifiers_erased")
            }
            let actor = try r.string("actor")
            let reason = r.optionalString("reason")
            let texts = try revealRedactable(conn, [actor] + (reason.map { [$0] } ?? []))
            func reveal(_ value: String) -> String { RedactableText.digest(of: value) == nil ? value : texts[value] ?? AuditEvent.redactedText }
            return StoredWithdrawal(
                id: try r.uuid("id"), mode: try r.choice("mode", WithdrawalMode.self), at: Timestamp(epochMilliseconds: try r.int64("at_ms")), by: byKind,
                actor: reveal(actor), reason: reason.map(reveal), consentVersion: r.optionalString("consent_version"), counts: counts)
        }
    }

    /// Records a withdrawal in one transaction: participant status, the consent in force marked
    /// withdrawn, and for `erase` the records, identifiers, withdrawal token, consents' signature
    /// evidence and the participant's redactable texts deleted (consent rows and audit events
    /// stay). For an escalation the first withdrawal instant is kept. The participant's row is
    /// locked first (`FOR UPDATE`), so an import still writing their records finishes before the
    /// count, and a second withdrawal of the same participant waits. After an erase the touched
    /// tables are vacuumed (``purgeDeletedData()``).
    @discardableResult
    public func withdraw(
        _ participant: ParticipantHandle, participantID: UUID, mode: WithdrawalMode, at: Timestamp, by: String, actor: String, reason: String?,
        consentVersion: String?, receiptID: UUID
    ) throws -> WithdrawalCounts {
        let pk = PostgresValue.int(participant.rowKey)
        let counts = try change { conn -> WithdrawalCounts in
            guard !(try conn.query("SELECT pk FROM participants WHERE pk = $1 FOR UPDATE", values: [pk])).isEmpty else {
                throw CohortError(.notFound, "the participant is not in this study database", at: .init(file: location),
                    hint: "list the participants with `cohort participant list`")
            }
            func count(_ table: String) throws -> Int {
                Int(try conn.query("SELECT count(*) FROM \(table) WHERE participant_pk = $1", values: [pk]).first?.first.flatMap { $0 } ?? "0") ?? 0
            }
            let counts = WithdrawalCounts(records: try count("records"), consents: try count("consents"), identifiersErased: mode == .erase)
            try conn.command(
                """
                UPDATE participants SET status = $1, withdrawn_at_ms = coalesce(withdrawn_at_ms, $2), withdrawn_offset = coalesce(withdrawn_offset, $3)
                WHERE pk = $4
                """, values: [.text(mode.status.rawValue), .int(at.epochMilliseconds), .int(Int64(at.utcOffsetSeconds)), pk])
            try conn.command("UPDATE consents SET status = 'withdrawn' WHERE participant_pk = $1 AND status = 'active'", values: [pk])
            if mode == .erase {
                try conn.command("DELETE FROM records WHERE participant_pk = $1", values: [pk])
                let nulls = PIISealing.identityColumns.map { "\($0.column) = NULL" }.joined(separator: ", ")
                let erasedCode = "ERASED-" + participantID.uuidString.lowercased().prefix(8)
                try conn.command(
                    "UPDATE participants SET \(nulls), code = $1, token_salt = NULL, token_hash = NULL WHERE pk = $2", values: [.text(erasedCode), pk])
                try conn.command("UPDATE consents SET signature_enc = NULL WHERE participant_pk = $1", values: [pk])
            }
            var details = [
                "mode": mode.rawValue, "by": by, "records": String(counts.records), "consents": String(counts.consents),
                "receipt_id": receiptID.uuidString.lowercased(),
            ]
            if let consentVersion { details["consent_version"] = consentVersion }
            let pid = participantID.uuidString.lowercased()
            // The reason is free text a person typed: the chain commits to its salted hash, the
            // text is kept sealed beside it, and an erase deletes it.
            let event = try appendEvent(
                conn, actor: actor, action: "participant.withdraw", subject: pid, details: details, redactable: reason.map { ["reason": $0] } ?? [:],
                owner: pid, at: at.date)
            try conn.command(
                "INSERT INTO withdrawals (id, participant_pk, mode, at_ms, by_kind, actor, reason, consent_version, counts_json) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                values: [
                    .text(receiptID.uuidString.lowercased()), pk, .text(mode.rawValue), .int(at.epochMilliseconds), .text(by), .text(event.actor),
                    .optional(event.details["reason"]), .optional(consentVersion), .text(String(decoding: try CanonicalJSON.encode(counts), as: UTF8.self)),
                ])
            if mode == .erase { try eraseRedactable(conn, participantID: pid) }
            return counts
        }
        if mode == .erase { try purgeDeletedData() }
        return counts
    }

    /// The tables an erase deletes or overwrites rows in.
    static let erasedTables = ["participants", "consents", "records", "redactable_texts"]

    /// Vacuums the tables an erase touches (outside any transaction, as VACUUM requires), so the
    /// dead row versions holding erased values are removed from the tables and their space is
    /// reused. What VACUUM cannot reach — the write-ahead log, backups, replicas, row versions
    /// an open snapshot still sees, tables this role does not own — is described in docs/store.md.
    public func purgeDeletedData() throws {
        guard !isReadOnly else {
            throw CohortError(.system, "this command opened the study database read-only and cannot vacuum it", at: .init(file: location))
        }
        try connection.withConnection { conn in
            _ = try conn.query("VACUUM " + Self.erasedTables.joined(separator: ", "))
        }
    }
}
