import CohortCore
import CohortCrypto
import CohortPostgres
public import CohortStore
import Foundation

/// The ``StoreTransaction`` seam on PostgreSQL: one read-committed transaction on the store's
/// connection. The audit trail is written by the server's functions (migration
/// `v6-server-audit`), which take the chain's lock; a withdrawal locks the participant's row
/// `FOR UPDATE`, so an import still writing their records (it holds `FOR KEY SHARE`) finishes
/// first, and a second withdrawal of the same participant waits.
struct PostgresTransaction: StoreTransaction {
    let conn: PostgresConnection
    let store: PostgresStudyStore

    var location: String { store.location }

    func lockAuditChain() throws { try store.lockAuditChain(conn) }

    func auditHead() throws -> (seq: Int64, hash: String)? { try store.head(conn) }

    func appendEvent(at: String, actor: String, action: String, subject: String?, details: [String: String]) throws -> AuditEvent {
        let selected = "o_seq, o_prev_hash, o_hash, o_db_role"
        let appended = try store.rows(
            conn, "SELECT \(selected) FROM cohort_append_event($1, $2, $3, $4, $5::jsonb)",
            [.text(at), .text(actor), .text(action), .optional(subject), .text(try AuditChain.detailsJSON(details))], selected: selected,
            table: "audit_events", rowIDColumn: nil)
        guard let row = appended.first else {
            throw PostgresStudyStore.problem(table: "audit_events", rowID: nil, column: "seq", expected: "the appended event", location: location)
        }
        var stamped = details
        stamped["db_role"] = try row.string("o_db_role")
        return AuditEvent(
            seq: try row.int64("o_seq"), at: at, actor: actor, action: action, subject: subject, details: stamped, prevHash: try row.string("o_prev_hash"),
            hash: try row.string("o_hash"))
    }

    func withdrawalEvents(after seq: Int64, modes: [WithdrawalMode]) throws -> [AuditEvent] {
        // Modes are fixed names (lower-case letters), so the array literal needs no quoting.
        try store.events(
            conn, where: "seq > $1 AND action = 'participant.withdraw' AND details->>'mode' = ANY($2::text[])",
            [.int(seq), .text("{" + modes.map(\.rawValue).joined(separator: ",") + "}")], revealing: false)
    }

    func checkpoint(seq: Int64) throws -> AuditCheckpoint? { try store.checkpoints(conn, "WHERE seq = $1", [.int(seq)]).first }

    func insertCheckpoint(_ checkpoint: AuditCheckpoint, at: String) throws {
        try conn.query(
            "SELECT cohort_append_checkpoint($1, $2, $3)", values: [.int(checkpoint.seq), .text(checkpoint.signature), .text(at)])
    }

    func studyID() throws -> String? {
        try store.rows(conn, "SELECT singleton, study_id FROM study", selected: "singleton, study_id", table: "study", rowIDColumn: "singleton")
            .first?.string("study_id")
    }

    func insertStudy(id: String, createdAt: String) throws {
        try conn.command("INSERT INTO study (singleton, study_id, created_at) VALUES (1, $1, $2)", values: [.text(id), .text(createdAt)])
    }

    func currentProtocolRevision() throws -> (sha256: String, revision: Int64)? {
        let selected = "sha256, revision, loaded_order"
        guard let row = try store.rows(conn, "SELECT \(selected) FROM protocol_revisions WHERE is_current", selected: selected,
            table: "protocol_revisions", rowIDColumn: "loaded_order").first
        else { return nil }
        return (try row.string("sha256"), try row.int64("revision"))
    }

    func insertCurrentProtocolRevision(_ row: NewProtocolRevisionRow) throws {
        try conn.command("UPDATE protocol_revisions SET is_current = false WHERE is_current")
        try conn.command(
            "INSERT INTO protocol_revisions (sha256, study_id, revision, canonical_json, source_path, loaded_at, is_current) VALUES ($1, $2, $3, $4, $5, $6, true)",
            values: [.text(row.sha256), .text(row.studyID), .int(row.revision), .bytes(Array(row.canonicalJSON)), .optional(row.sourcePath), .text(row.loadedAt)])
    }

    func insertTemplate(protocolSHA256: String, path: String, content: Data) throws {
        try conn.command(
            "INSERT INTO templates (protocol_sha256, path, sha256, content) VALUES ($1, $2, $3, $4)",
            values: [.text(protocolSHA256), .text(path), .text(SHA256.hex(content)), .bytes(Array(content))])
    }

    func insertRedactable(_ text: RedactableText, owner: String?) throws {
        try conn.command(
            "INSERT INTO redactable_texts (digest, participant_id, salt, text_enc) VALUES ($1, $2, $3, $4)",
            values: [.text(text.digest), .optional(owner), .bytes(text.salt), .bytes(text.sealed)])
    }

    func deleteRedactable(owner: String) throws {
        try conn.query("SELECT cohort_erase_redactable($1)", values: [.text(owner)])
    }

    func participantExists(code: String) throws -> Bool {
        !(try conn.query("SELECT 1 FROM participants WHERE code = $1", values: [.text(code)])).isEmpty
    }

    func insertParticipant(_ row: NewParticipantRow) throws {
        let p = row.participant
        let identity = PIISealing.identityColumns.map(\.column).joined(separator: ", ")
        let placeholders = (1...(PIISealing.identityColumns.count + 10)).map { "$\($0)" }.joined(separator: ", ")
        let values: [PostgresValue] =
            [
                .text(p.id.uuidString.lowercased()), .text(p.code), .optional(p.site), .text(p.sex.rawValue), .text(p.timeZone),
                .text(p.enrolledOn.description), .text(p.status.rawValue),
            ] + row.sealedIdentity.map { PostgresValue.optional($0) } + [.bytes(row.tokenSalt), .bytes(row.tokenHash), .text(row.createdAt)]
        try conn.command(
            """
            INSERT INTO participants (id, code, site, sex, time_zone, enrolled_on, status, \(identity), token_salt, token_hash, created_at)
            VALUES (\(placeholders))
            """, values: values)
    }

    func lockParticipant(_ participant: ParticipantHandle) throws -> Bool {
        !(try conn.query("SELECT pk FROM participants WHERE pk = $1 FOR UPDATE", values: [.int(participant.rowKey)])).isEmpty
    }

    func count(_ table: ParticipantTable, of participant: ParticipantHandle) throws -> Int {
        let text = try conn.query("SELECT count(*) FROM \(table.rawValue) WHERE participant_pk = $1", values: [.int(participant.rowKey)]).first?.first
        return Int((text ?? nil) ?? "0") ?? 0
    }

    func markWithdrawn(_ participant: ParticipantHandle, status: ParticipantStatus, at: Timestamp) throws {
        try conn.command(
            """
            UPDATE participants SET status = $1, withdrawn_at_ms = coalesce(withdrawn_at_ms, $2), withdrawn_offset = coalesce(withdrawn_offset, $3)
            WHERE pk = $4
            """, values: [.text(status.rawValue), .int(at.epochMilliseconds), .int(Int64(at.utcOffsetSeconds)), .int(participant.rowKey)])
    }

    func eraseIdentity(_ participant: ParticipantHandle, code: String) throws {
        let nulls = PIISealing.identityColumns.map { "\($0.column) = NULL" }.joined(separator: ", ")
        try conn.command(
            "UPDATE participants SET \(nulls), code = $1, token_salt = NULL, token_hash = NULL WHERE pk = $2",
            values: [.text(code), .int(participant.rowKey)])
    }

    func insertImportBatch(_ info: ImportBatchInfo, importedAt: String) throws -> Int64 {
        let created = try conn.query(
            "INSERT INTO import_batches (file_name, file_sha256, format, imported_at, actor) VALUES ($1, $2, $3, $4, '') RETURNING id",
            [info.fileName, info.fileSHA256, info.format, importedAt])
        guard let text = created.first?.first ?? nil, let batchID = Int64(text) else {
            throw PostgresStudyStore.problem(table: "import_batches", rowID: nil, column: "id", expected: "the new batch's id", location: location)
        }
        return batchID
    }

    /// The sink seals notes with the data key of each participant's site (the store's key ring);
    /// `piiKey` (the ring's default) is for a participant whose site has none.
    func recordSink(batchID: Int64, piiKey: [UInt8]) throws -> any StoreRecordSink {
        try PostgresRecordSink(connection: conn, batchID: batchID, keys: store.keys)
    }

    func participantSite(id: String) throws -> String? {
        guard !store.keys.siteKeys.isEmpty else { return nil }
        return (try conn.query("SELECT site FROM participants WHERE id::text = $1", values: [.text(id)]).first?.first ?? nil)
    }

    func participantSite(_ participant: ParticipantHandle) throws -> String? {
        guard !store.keys.siteKeys.isEmpty else { return nil }
        return (try conn.query("SELECT site FROM participants WHERE pk = $1", values: [.int(participant.rowKey)]).first?.first ?? nil)
    }

    func withdrawnParticipants() throws -> [(key: Int64, status: String, withdrawnAtMs: Int64?)] {
        try store.rows(conn, ImportedParticipants.withdrawnParticipantsSQL, selected: "pk, status, withdrawn_at_ms", table: "participants", rowIDColumn: "pk")
            .map { (key: try $0.int64("pk"), status: try $0.string("status"), withdrawnAtMs: try $0.optionalInt64("withdrawn_at_ms")) }
    }

    /// The digest was inserted with the row (``completesImportDigest`` is false): `fileSHA256` is that one.
    func completeImportBatch(_ id: Int64, counts: ImportCounts, fileSHA256: String, actor: String) throws {
        try conn.command(
            "UPDATE import_batches SET rows_total = $1, rows_inserted = $2, rows_duplicate = $3, rows_rejected = $4, actor = $5 WHERE id = $6",
            values: [
                .int(Int64(counts.total)), .int(Int64(counts.inserted)), .int(Int64(counts.duplicates)), .int(Int64(counts.rejected)), .text(actor),
                .int(id),
            ])
    }

    func insertConsent(_ consent: Consent, participant: ParticipantHandle, signature: [UInt8]?) throws {
        try conn.command(
            """
            INSERT INTO consents (id, participant_pk, version, document_sha256, signed_at_ms, signed_offset, signature_kind, signature_enc,
                sharing, status, recorded_at_ms, recorded_offset) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
            """,
            values: [
                .text(consent.id.uuidString.lowercased()), .int(participant.rowKey), .text(consent.version), .text(consent.documentSHA256),
                .int(consent.signedAt.epochMilliseconds), .int(Int64(consent.signedAt.utcOffsetSeconds)), .text(consent.signatureKind.rawValue),
                .optional(signature), .text(consent.sharing.rawValue), .text(consent.status.rawValue), .int(consent.recordedAt.epochMilliseconds),
                .int(Int64(consent.recordedAt.utcOffsetSeconds)),
            ])
    }

    func supersedeConsent(_ id: UUID, of participant: ParticipantHandle) throws {
        try conn.command(
            "UPDATE consents SET status = 'superseded' WHERE id = $1 AND participant_pk = $2 AND status = 'active'",
            values: [.text(id.uuidString.lowercased()), .int(participant.rowKey)])
    }

    func withdrawActiveConsents(of participant: ParticipantHandle) throws {
        try conn.command("UPDATE consents SET status = 'withdrawn' WHERE participant_pk = $1 AND status = 'active'", values: [.int(participant.rowKey)])
    }

    func deleteSignatureEvidence(of participant: ParticipantHandle) throws {
        try conn.command("UPDATE consents SET signature_enc = NULL WHERE participant_pk = $1", values: [.int(participant.rowKey)])
    }

    func insertWithdrawal(_ row: NewWithdrawalRow) throws {
        try conn.command(
            "INSERT INTO withdrawals (id, participant_pk, mode, at_ms, by_kind, actor, reason, consent_version, counts_json) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            values: [
                .text(row.id.uuidString.lowercased()), .int(row.participant.rowKey), .text(row.mode.rawValue), .int(row.at.epochMilliseconds), .text(row.by),
                .text(row.actor), .optional(row.reason), .optional(row.consentVersion), .text(row.countsJSON),
            ])
    }

    func deleteRecords(of participant: ParticipantHandle) throws {
        try conn.query("SELECT cohort_erase_records($1)", values: [.int(participant.rowKey)])
    }
}

extension PostgresStudyStore {
    /// Runs `body` in one read-committed write transaction (see ``change(_:)``: the server's
    /// refusals turned into messages a coordinator can act on), through the store seam.
    public func writeTransaction<T>(_ body: (StoreWriteTransaction) throws -> T) throws -> T {
        try change { conn in
            try body(StoreWriteTransaction(PostgresTransaction(conn: conn, store: self), operations: StudyOperations(keys: keys)))
        }
    }
}
