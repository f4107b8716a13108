package import CohortCore
import CohortCompliance
package import CohortCrypto
package import Foundation

/// The study's state-changing operations, written once for both stores over the
/// ``StoreTransaction`` seam: appending an audit event (with its redactable texts), enrolling,
/// recording a consent, withdrawing (and what an erase deletes), and committing an export.
///
/// Each store opens its transaction, wraps it in its ``StoreTransaction`` and calls these; no
/// SQL here. What a withdrawal does follows ``WithdrawalEffects``, the one answer to what a mode
/// requires.
package struct StudyOperations: Sendable {
    /// The keys identifiers, signature evidence and redactable texts are sealed with (one key
    /// on SQLite; on PostgreSQL with per-site data keys, the participant's site chooses).
    let keys: PIIKeyRing

    package init(piiKey: [UInt8]) {
        self.keys = .single(piiKey)
    }

    package init(keys: PIIKeyRing) {
        self.keys = keys
    }

    // MARK: Audit trail

    /// Appends an event inside `tx` and returns it. The actor name and every `redactable`
    /// detail are sealed as redactable texts first (the chain commits to their salted hashes;
    /// `owner` is the participant they may concern, whose erase deletes them); then the store
    /// appends under the chain's lock — so the lock is held for as short a time as possible.
    @discardableResult
    package func appendEvent(_ tx: some StoreTransaction, _ entry: AuditEntry, at: Date) throws -> AuditEvent {
        let instant = AuditChain.instant(at)
        let committedActor = try storeRedactable(tx, entry.actor, owner: nil)
        var committed = entry.details
        var revealed = ["actor": entry.actor]
        for (key, text) in entry.redactable {
            committed[key] = try storeRedactable(tx, text, owner: entry.owner)
            revealed["details." + key] = text
        }
        var event = try tx.appendEvent(at: instant, actor: committedActor, action: entry.action, subject: entry.subject, details: committed)
        event.revealed = revealed
        return event
    }

    /// Signs the chain's head under the chain's lock and stores the checkpoint; an already
    /// signed head returns its stored checkpoint if `signingKey` or one of `accepting` (the keys
    /// the trail registered: another site's) made it (else `.integrity`); nil for an empty chain.
    package func checkpoint(
        _ tx: some StoreTransaction, signingKey: Ed25519PrivateKey, accepting: CheckpointSigners? = nil, at: Date
    ) throws -> AuditCheckpoint? {
        try tx.lockAuditChain()
        guard let (seq, hash) = try tx.auditHead() else { return nil }
        if let existing = try tx.checkpoint(seq: seq) {
            // Never hand on (into a manifest) a stored signature this workspace's key does not make.
            guard signingKey.publicKey.isValidSignature(Base64.decode(existing.signature) ?? [], for: existing.signedBytes)
                || accepting?.signer(of: existing) != nil
            else {
                throw CohortError(
                    .integrity, "the stored checkpoint of audit event \(seq) does not verify with this workspace's signing key",
                    at: .init(file: tx.location, field: "audit_checkpoints.signature"),
                    hint: "run `cohort audit verify` (it names who stored the row on PostgreSQL); the owner removes a checkpoint that is not the study's after review")
            }
            return existing
        }
        let signature = Base64.encode(try signingKey.signature(for: AuditCheckpoint.message(seq: seq, headHash: hash)))
        let checkpoint = AuditCheckpoint(seq: seq, headHash: hash, signature: signature)
        try tx.insertCheckpoint(checkpoint, at: AuditChain.instant(at))
        return checkpoint
    }

    // MARK: Protocols

    /// Pins `loaded` (and the text of every template it names) as current with `protocol.load`.
    /// Runs under the chain's lock from the start, so two coordinators loading at once pin one
    /// after the other. A protocol for another study is refused (one database holds one
    /// study), and so is an older revision or the same revision with other content; the same
    /// content again changes nothing.
    package func pinProtocol(
        _ tx: some StoreTransaction, _ loaded: LoadedProtocol, templates: [String: Data], actor: String, at: Date
    ) throws -> PinnedProtocol {
        let json = try loaded.canonicalJSON()
        let sha = SHA256.hex(json)
        let p = loaded.studyProtocol
        let pinned = PinnedProtocol(studyProtocol: p, sha256: sha, canonicalJSON: json)
        try tx.lockAuditChain()
        let study = try tx.studyID()
        if let study, study != p.id {
            throw CohortError(.conflict, "this workspace holds study '\(study)', not '\(p.id)'",
                hint: "one workspace holds one study: create another with `cohort init -w <dir>`")
        }
        if study == nil { try tx.insertStudy(id: p.id, createdAt: AuditChain.instant(at)) }
        if let current = try tx.currentProtocolRevision() {
            if current.sha256 == sha { return pinned }
            if current.revision > Int64(p.revision) {
                throw CohortError(.conflict, "revision \(p.revision) is older than the current revision \(current.revision)",
                    hint: "increase 'revision' in the protocol file for an amendment")
            }
            if current.revision == Int64(p.revision) {
                throw CohortError(.conflict, "revision \(p.revision) is already loaded with different content", hint: "an amendment needs a new revision number")
            }
        }
        try tx.insertCurrentProtocolRevision(
            NewProtocolRevisionRow(
                sha256: sha, studyID: p.id, revision: Int64(p.revision), canonicalJSON: json, sourcePath: loaded.source?.lastPathComponent,
                loadedAt: AuditChain.instant(at)))
        for (path, content) in templates.sorted(by: { $0.key < $1.key }) { try tx.insertTemplate(protocolSHA256: sha, path: path, content: content) }
        let details = ["revision": String(p.revision), "sha256": sha, "templates": String(templates.count)]
        try appendEvent(tx, AuditEntry(actor: actor, action: "protocol.load", subject: p.id, details: details), at: at)
        return pinned
    }

    /// Seals `text` as a redactable text of `owner` and returns the reference the chain commits to.
    package func storeRedactable(_ tx: some StoreTransaction, _ text: String, owner: String?) throws -> String {
        let key = try owner.map { keys.key(forSite: try tx.participantSite(id: $0)) } ?? keys.defaultKey
        let sealed = try RedactableText.seal(text, key: key)
        try tx.insertRedactable(sealed, owner: owner)
        return sealed.reference
    }

    // MARK: Participants and consents

    /// Enrolls `enrollments` (identities sealed), one `participant.enroll` event each; a study
    /// code already enrolled is a conflict, and so is one another coordinator enrolled between
    /// the check and the insert (a unique violation, SQLSTATE 23505).
    package func enroll(_ tx: some StoreTransaction, _ enrollments: [Enrollment], actor: String, source: String, at: Date) throws {
        for e in enrollments {
            let p = e.participant
            if try tx.participantExists(code: p.code) {
                throw CohortError(.conflict, "participant \(p.code) is already enrolled", hint: "choose another study code")
            }
            let id = p.id.uuidString.lowercased()
            let row = NewParticipantRow(
                participant: p, sealedIdentity: try PIISealing.sealIdentity(e.identity, participantID: id, key: keys.key(forSite: p.site)), tokenSalt: e.tokenSalt,
                tokenHash: e.tokenHash, createdAt: AuditChain.instant(at))
            do {
                try tx.insertParticipant(row)
            } catch let error as CohortError where error.cause == .sqlState("23505") {
                // Another coordinator enrolled the same code (or id) between the check and the insert.
                throw CohortError(
                    .conflict, "a participant of this roster was enrolled by another coordinator at the same time; nothing was enrolled",
                    at: .init(file: tx.location), hint: "list the participants (cohort participant list) and enrol the rest again")
            }
            try appendEvent(tx, AuditEntry(actor: actor, action: "participant.enroll", subject: id, details: e.auditDetails(source: source)), at: at)
        }
    }

    /// Stores a consent (its signature evidence sealed), marks `supersede` superseded, and
    /// appends `consent.record`.
    package func recordConsent(
        _ tx: some StoreTransaction, _ consent: Consent, participant: ParticipantHandle, signatureEvidence: String?, supersede: [UUID], actor: String,
        at: Date
    ) throws {
        let id = consent.id.uuidString.lowercased()
        let key = keys.key(forSite: try tx.participantSite(participant))
        let evidence = try signatureEvidence.map { try PIISealing.sealSignature($0, consentID: id, key: key) }
        try tx.insertConsent(consent, participant: participant, signature: evidence)
        for old in supersede { try tx.supersedeConsent(old, of: participant) }
        let details = [
            "consent_id": id, "version": consent.version, "document_sha256": consent.documentSHA256, "sharing": consent.sharing.rawValue,
            "signature_kind": consent.signatureKind.rawValue, "superseded": String(supersede.count),
        ]
        try appendEvent(tx, AuditEntry(actor: actor, action: "consent.record", subject: consent.participantID.uuidString.lowercased(), details: details), at: at)
    }

    // MARK: Imports

    /// Runs `body` with a sink for a new import batch, then — after the last row — refuses the
    /// whole file if a participant it wrote withdrew meanwhile (``ImportedParticipants``), and
    /// appends `data.import` (under the chain's lock, the only step that waits for other
    /// coordinators) with the batch's counts. Nothing is stored when `body` throws.
    package func importBatch(
        _ tx: some StoreTransaction, _ info: ImportBatchInfo, actor: String, at: Date, body: (any RecordSink) throws -> ImportCounts
    ) throws -> ImportBatchResult {
        var info = info
        if !tx.completesImportDigest, let pending = info.pendingSHA256 {
            info.fileSHA256 = try pending()
            info.pendingSHA256 = nil
        }
        let batchID = try tx.insertImportBatch(info, importedAt: AuditChain.instant(at))
        let sink = try tx.recordSink(batchID: batchID, piiKey: keys.defaultKey)
        let counts: ImportCounts
        do {
            counts = try body(sink)
        } catch {
            sink.abandon()
            throw error
        }
        try sink.finish()
        if sink.imported.anyWithdrew(try tx.withdrawnParticipants()) { throw ImportedParticipants.withdrawnDuringImport(location: tx.location) }
        let fileSHA256 = try info.pendingSHA256?() ?? info.fileSHA256
        let details = [
            "file_sha256": fileSHA256, "format": info.format, "rows": String(counts.total), "inserted": String(counts.inserted),
            "duplicates": String(counts.duplicates), "rejected": String(counts.rejected),
        ]
        let event = try appendEvent(tx, AuditEntry(actor: actor, action: "data.import", subject: "batch-\(batchID)", details: details), at: at)
        // The batch names its actor by the same redactable reference as its audit event.
        try tx.completeImportBatch(batchID, counts: counts, fileSHA256: fileSHA256, actor: event.actor)
        return ImportBatchResult(batchID: batchID, rowsTotal: counts.total, inserted: counts.inserted, duplicates: counts.duplicates, rejected: counts.rejected)
    }

    // MARK: Withdrawal

    /// The study code an erased participant keeps: `ERASED-` and the first eight hex digits of
    /// their internal id (no trace of the old code).
    package static func erasedCode(_ participantID: UUID) -> String {
        "ERASED-" + participantID.uuidString.lowercased().prefix(8)
    }

    /// Withdraws the participant in `mode`: their row locked first (a participant that is not
    /// there is `notFound`), counted, status set (the first withdrawal instant kept), the
    /// consent in force marked withdrawn, then what ``WithdrawalEffects`` says `mode` deletes —
    /// records; identifiers, study code, withdrawal token, signature evidence and redactable
    /// texts — with `participant.withdraw` and the withdrawal row. Consent rows and audit events
    /// stay.
    package func withdraw(
        _ tx: some StoreTransaction, _ participant: ParticipantHandle, participantID: UUID, mode: WithdrawalMode, at: Timestamp, by: String,
        actor: String, reason: String?, consentVersion: String?, receiptID: UUID
    ) throws -> WithdrawalCounts {
        guard try tx.lockParticipant(participant) else {
            throw CohortError(.notFound, "the participant is not in this study database", at: .init(file: tx.location),
                hint: "list the participants with `cohort participant list`")
        }
        let effects = WithdrawalEffects(mode)
        let counts = WithdrawalCounts(
            records: try tx.count(.records, of: participant), consents: try tx.count(.consents, of: participant),
            identifiersErased: effects.deleteIdentifiers)
        try tx.markWithdrawn(participant, status: mode.status, at: at)
        try tx.withdrawActiveConsents(of: participant)
        if effects.deleteRecords { try tx.deleteRecords(of: participant) }
        if effects.deleteIdentifiers {
            try tx.eraseIdentity(participant, code: Self.erasedCode(participantID))
            try tx.deleteSignatureEvidence(of: participant)
        }
        var details = [
            "mode": mode.rawValue, "by": by, "records": String(counts.records), "consents": String(counts.consents),
            "receipt_id": receiptID.uuidString.lowercased(),
        ]
        if let consentVersion { details["consent_version"] = consentVersion }
        let pid = participantID.uuidString.lowercased()
        // The reason is free text a person typed: the chain commits to its salted hash, the text
        // is kept sealed beside it, and an erase deletes it.
        let event = try appendEvent(
            tx,
            AuditEntry(
                actor: actor, action: "participant.withdraw", subject: pid, details: details, redactable: reason.map { ["reason": $0] } ?? [:], owner: pid),
            at: at.date)
        try tx.insertWithdrawal(
            NewWithdrawalRow(
                id: receiptID, participant: participant, mode: mode, at: at, by: by, actor: event.actor, reason: event.details["reason"],
                consentVersion: consentVersion, countsJSON: String(decoding: try CanonicalJSON.encode(counts), as: UTF8.self)))
        if effects.deleteIdentifiers { try tx.deleteRedactable(owner: pid) }
        return counts
    }

    // MARK: Exports

    /// Appends `export.create` unless a participant in `participantIDs` withdrew in a mode that
    /// leaves them out of exports after the audit event `snapshotSeq` (the export's
    /// `export.begin`). The check runs under the chain's lock, and a withdrawal's event is
    /// appended under the same lock, so a withdrawal either committed before the check (and is
    /// seen) or follows `export.create` (and the export legitimately preceded it).
    package func commitExport(
        _ tx: some StoreTransaction, snapshotSeq: Int64, participantIDs: Set<UUID>, actor: String, subject: String?, details: [String: String], at: Date
    ) throws -> ExportCommitResult {
        try tx.lockAuditChain()
        let excluding = WithdrawalMode.allCases.filter { WithdrawalEffects($0).excludeFromExports }
        var withdrawn: [UUID] = []
        for event in try tx.withdrawalEvents(after: snapshotSeq, modes: excluding) {
            guard let text = event.subject, let id = UUID(uuidString: text), participantIDs.contains(id), !withdrawn.contains(id) else { continue }
            withdrawn.append(id)
        }
        if !withdrawn.isEmpty { return .withdrawnSinceSnapshot(withdrawn) }
        return .committed(try appendEvent(tx, AuditEntry(actor: actor, action: "export.create", subject: subject, details: details), at: at))
    }
}
