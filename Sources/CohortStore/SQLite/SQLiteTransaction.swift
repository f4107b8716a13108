import CohortCore
import CohortCrypto
import Foundation
import GRDB

/// The ``StoreTransaction`` seam on SQLite: a GRDB write transaction. The transaction holds
/// the database's write lock from its first write to its end, so the chain and row locks need
/// no statement of their own.
struct SQLiteTransaction: StoreTransaction {
    let db: Database
    let location: String

    func lockAuditChain() throws {}

    func auditHead() throws -> (seq: Int64, hash: String)? {
        guard let last = try Row.fetchOne(db, sql: "SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1") else { return nil }
        let r = RowReader(last, table: "audit_events", file: location, rowIDColumn: "seq")
        return (try r.int64("seq"), try r.string("hash"))
    }

    func appendEvent(at: String, actor: String, action: String, subject: String?, details: [String: String]) throws -> AuditEvent {
        // The write lock is the chain's lock: the head read here stays the head until commit.
        let event = try AuditChain.next(after: try auditHead(), at: at, actor: actor, action: action, subject: subject, details: details)
        let detailsJSON = try AuditChain.detailsJSON(details)
        try db.execute(
            sql: "INSERT INTO audit_events (seq, at, actor, action, subject, details, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            arguments: [event.seq, event.at, event.actor, event.action, event.subject, detailsJSON, event.prevHash, event.hash])
        return event
    }

    func withdrawalEvents(after seq: Int64, modes: [WithdrawalMode]) throws -> [AuditEvent] {
        let placeholders = modes.map { _ in "?" }.joined(separator: ", ")
        return try AuditEventRow.fetchAll(
            db,
            sql: """
                SELECT * FROM audit_events
                WHERE seq > ? AND action = 'participant.withdraw' AND json_valid(details) AND json_extract(details, '$.mode') IN (\(placeholders))
                ORDER BY seq
                """, arguments: StatementArguments([seq] as [any DatabaseValueConvertible] + modes.map(\.rawValue))
        ).map(\.event)
    }

    func checkpoint(seq: Int64) throws -> AuditCheckpoint? {
        try AuditCheckpointRow.fetchOne(db, sql: "SELECT * FROM audit_checkpoints WHERE seq = ?", arguments: [seq])?.checkpoint
    }

    func insertCheckpoint(_ checkpoint: AuditCheckpoint, at: String) throws {
        try db.execute(
            sql: "INSERT INTO audit_checkpoints (seq, head_hash, signature, at) VALUES (?, ?, ?, ?)",
            arguments: [checkpoint.seq, checkpoint.headHash, checkpoint.signature, at])
    }

    func studyID() throws -> String? { try StudyRow.fetchOne(db, sql: "SELECT * FROM study")?.studyID }

    func insertStudy(id: String, createdAt: String) throws {
        try db.execute(sql: "INSERT INTO study (singleton, study_id, created_at) VALUES (1, ?, ?)", arguments: [id, createdAt])
    }

    func currentProtocolRevision() throws -> (sha256: String, revision: Int64)? {
        try ProtocolRevisionRow.fetchOne(db, sql: "SELECT *, rowid AS row_id FROM protocol_revisions WHERE is_current = 1").map { ($0.sha256, $0.revision) }
    }

    func insertCurrentProtocolRevision(_ row: NewProtocolRevisionRow) throws {
        try db.execute(sql: "UPDATE protocol_revisions SET is_current = 0 WHERE is_current = 1")
        try db.execute(
            sql: "INSERT INTO protocol_revisions (sha256, study_id, revision, canonical_json, source_path, loaded_at, is_current) VALUES (?, ?, ?, ?, ?, ?, 1)",
            arguments: [row.sha256, row.studyID, row.revision, row.canonicalJSON, row.sourcePath, row.loadedAt])
    }

    func insertTemplate(protocolSHA256: String, path: String, content: Data) throws {
        try db.execute(
            sql: "INSERT INTO templates (protocol_sha256, path, sha256, content) VALUES (?, ?, ?, ?)",
            arguments: [protocolSHA256, path, SHA256.hex(content), content])
    }

    func insertRedactable(_ text: RedactableText, owner: String?) throws {
        try db.execute(
            sql: "INSERT INTO redactable_texts (digest, participant_id, salt, text_enc) VALUES (?, ?, ?, ?)",
            arguments: [text.digest, owner, Data(text.salt), Data(text.sealed)])
    }

    func deleteRedactable(owner: String) throws {
        try db.execute(sql: "DELETE FROM redactable_texts WHERE participant_id = ?", arguments: [owner])
    }

    func participantExists(code: String) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT 1 FROM participants WHERE code = ?", arguments: [code]) == true
    }

    func insertParticipant(_ row: NewParticipantRow) throws {
        let p = row.participant
        var arguments: StatementArguments = [p.id.uuidString.lowercased(), p.code, p.sex.rawValue, p.timeZone, p.enrolledOn.description, p.status.rawValue]
        arguments += StatementArguments(row.sealedIdentity.map { $0.map { Data($0) } })
        arguments += [Data(row.tokenSalt), Data(row.tokenHash), row.createdAt, p.site]
        let identity = ParticipantRow.identityColumns.joined(separator: ", ")
        let placeholders = Array(repeating: "?", count: 10 + ParticipantRow.identityColumns.count).joined(separator: ", ")
        try db.execute(
            sql: """
                INSERT INTO participants (id, code, sex, time_zone, enrolled_on, status, \(identity), token_salt, token_hash, created_at, site)
                VALUES (\(placeholders))
                """, arguments: arguments)
    }

    func lockParticipant(_ participant: ParticipantHandle) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT 1 FROM participants WHERE pk = ?", arguments: [participant.rowKey]) == true
    }

    func count(_ table: ParticipantTable, of participant: ParticipantHandle) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table.rawValue) WHERE participant_pk = ?", arguments: [participant.rowKey]) ?? 0
    }

    func markWithdrawn(_ participant: ParticipantHandle, status: ParticipantStatus, at: Timestamp) throws {
        try db.execute(
            sql: """
                UPDATE participants SET status = ?, withdrawn_at_ms = coalesce(withdrawn_at_ms, ?), withdrawn_offset = coalesce(withdrawn_offset, ?)
                WHERE pk = ?
                """, arguments: [status.rawValue, at.epochMilliseconds, Int64(at.utcOffsetSeconds), participant.rowKey])
    }

    func eraseIdentity(_ participant: ParticipantHandle, code: String) throws {
        let nulls = ParticipantRow.identityColumns.map { "\($0) = NULL" }.joined(separator: ", ")
        try db.execute(
            sql: "UPDATE participants SET \(nulls), code = ?, token_salt = NULL, token_hash = NULL WHERE pk = ?", arguments: [code, participant.rowKey])
    }

    func insertImportBatch(_ info: ImportBatchInfo, importedAt: String) throws -> Int64 {
        try db.execute(
            sql: "INSERT INTO import_batches (file_name, file_sha256, format, imported_at, actor) VALUES (?, ?, ?, ?, ?)",
            arguments: [info.fileName, info.fileSHA256, info.format, importedAt, ""])
        return db.lastInsertedRowID
    }

    func recordSink(batchID: Int64, piiKey: [UInt8]) throws -> any StoreRecordSink {
        try SQLiteRecordInserter(db: db, batchID: batchID, piiKey: piiKey)
    }

    func withdrawnParticipants() throws -> [(key: Int64, status: String, withdrawnAtMs: Int64?)] {
        try Row.fetchAll(db, sql: ImportedParticipants.withdrawnParticipantsSQL).map { row in
            let r = RowReader(row, table: "participants", file: location, rowIDColumn: "pk")
            return (key: try r.int64("pk"), status: try r.string("status"), withdrawnAtMs: try r.optionalInt64("withdrawn_at_ms"))
        }
    }

    /// The batch row is completed with its file's digest (hashed beside the import).
    var completesImportDigest: Bool { true }

    func completeImportBatch(_ id: Int64, counts: ImportCounts, fileSHA256: String, actor: String) throws {
        try db.execute(
            sql: "UPDATE import_batches SET rows_total = ?, rows_inserted = ?, rows_duplicate = ?, rows_rejected = ?, file_sha256 = ?, actor = ? WHERE id = ?",
            arguments: [counts.total, counts.inserted, counts.duplicates, counts.rejected, fileSHA256, actor, id])
    }

    func insertConsent(_ consent: Consent, participant: ParticipantHandle, signature: [UInt8]?) throws {
        try db.execute(
            sql: """
                INSERT INTO consents (id, participant_pk, version, document_sha256, signed_at_ms, signed_offset, signature_kind, signature_enc,
                    sharing, status, recorded_at_ms, recorded_offset) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                consent.id.uuidString.lowercased(), participant.rowKey, consent.version, consent.documentSHA256, consent.signedAt.epochMilliseconds,
                Int64(consent.signedAt.utcOffsetSeconds), consent.signatureKind.rawValue, signature.map { Data($0) }, consent.sharing.rawValue,
                consent.status.rawValue, consent.recordedAt.epochMilliseconds, Int64(consent.recordedAt.utcOffsetSeconds),
            ])
    }

    func supersedeConsent(_ id: UUID, of participant: ParticipantHandle) throws {
        try db.execute(
            sql: "UPDATE consents SET status = 'superseded' WHERE id = ? AND participant_pk = ? AND status = 'active'",
            arguments: [id.uuidString.lowercased(), participant.rowKey])
    }

    func withdrawActiveConsents(of participant: ParticipantHandle) throws {
        try db.execute(sql: "UPDATE consents SET status = 'withdrawn' WHERE participant_pk = ? AND status = 'active'", arguments: [participant.rowKey])
    }

    func deleteSignatureEvidence(of participant: ParticipantHandle) throws {
        try db.execute(sql: "UPDATE consents SET signature_enc = NULL WHERE participant_pk = ?", arguments: [participant.rowKey])
    }

    func insertWithdrawal(_ row: NewWithdrawalRow) throws {
        try db.execute(
            sql: "INSERT INTO withdrawals (id, participant_pk, mode, at_ms, by_kind, actor, reason, consent_version, counts_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            arguments: [
                row.id.uuidString.lowercased(), row.participant.rowKey, row.mode.rawValue, row.at.epochMilliseconds, row.by, row.actor, row.reason,
                row.consentVersion, row.countsJSON,
            ])
    }

    func deleteRecords(of participant: ParticipantHandle) throws {
        try db.execute(sql: "DELETE FROM records WHERE participant_pk = ?", arguments: [participant.rowKey])
    }
}

extension SQLiteStudyStore {
    /// Runs `body` in one write transaction (GRDB's `write`: the database's write lock from the
    /// first write to the end), through the store seam.
    public func writeTransaction<T>(_ body: (StoreWriteTransaction) throws -> T) throws -> T {
        try write { db in
            try body(StoreWriteTransaction(SQLiteTransaction(db: db, location: url.path), operations: StudyOperations(piiKey: piiKey)))
        }
    }

    /// ``writeTransaction(_:)`` with the statement journals in memory (`PRAGMA temp_store =
    /// MEMORY` while the transaction runs; back to the default after it). A multi-row `INSERT`
    /// can stop half-way (a CHECK, a foreign key), so SQLite keeps a statement journal of the
    /// pages it changes, to undo that one statement; past 64 KiB it spills to an unnamed file in
    /// /var/tmp — at bench M about 1 GB of writes per import, and pages of study records written
    /// outside the workspace. In memory it holds one statement's pages (32 rows). Durability is
    /// unchanged: a statement journal only undoes a statement inside an open transaction; a crash
    /// is recovered from the write-ahead log, as before.
    ///
    /// Foreign keys are not enforced row by row in this transaction (issue 28): SQLite checked
    /// each record's `participant_pk` and `batch_id` with a look-up in `participants` and
    /// `import_batches` per row — about a quarter of the import's SQLite time at bench M. The
    /// import's sink checks the same thing once per participant instead: every row it binds has
    /// its batch's id and a participant key it noted (``ImportedParticipants``), and
    /// ``SQLiteRecordInserter/finish()`` looks each of those up before the batch is completed,
    /// failing the transaction (nothing imported) when one is missing, as the per-row check
    /// would have. Nothing else in the transaction writes a table with a foreign key (the batch
    /// row, the audit event and the batch's counts have none), and the write lock held until
    /// commit keeps what was looked up there. PostgreSQL's `records` has no foreign keys either
    /// (migration v4-bulk-records; its sink locks the participants it wrote).
    public func importTransaction<T>(_ body: (StoreWriteTransaction) throws -> T) throws -> T {
        try write(bulkRecords: true) { db in
            try body(StoreWriteTransaction(SQLiteTransaction(db: db, location: url.path), operations: StudyOperations(piiKey: piiKey)))
        }
    }
}
