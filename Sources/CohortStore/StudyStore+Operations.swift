public import CohortCore
public import CohortCrypto
public import Foundation

/// One write transaction of a store, as the study's operations see it. It offers nothing
/// outside CohortStore: a library user changes the study only through the operations below.
public struct StoreWriteTransaction {
    /// The store's seam (its SQL and locking).
    package let seam: any StoreTransaction
    /// The operations, with the store's `pii.key`.
    package let operations: StudyOperations

    /// A transaction of `seam` (for the stores only).
    package init(_ seam: any StoreTransaction, operations: StudyOperations) {
        self.seam = seam
        self.operations = operations
    }
}

/// The study's state-changing operations, the same for every store: each runs
/// ``StudyOperations`` in one ``StudyStore/writeTransaction(_:)`` of the store.
extension StudyStore {
    /// Pins a protocol revision (and its templates) as current, appending `protocol.load`.
    @discardableResult
    public func pinProtocol(_ loaded: LoadedProtocol, templates: [String: Data], actor: String, at: Date) throws -> PinnedProtocol {
        try writeTransaction { t in try t.operations.pinProtocol(t.seam, loaded, templates: templates, actor: actor, at: at) }
    }

    /// Enrolls `enrollments` in one transaction (all or nothing), appending one
    /// `participant.enroll` each.
    public func enroll(_ enrollments: [Enrollment], actor: String, source: String, at: Date) throws {
        try writeTransaction { t in try t.operations.enroll(t.seam, enrollments, actor: actor, source: source, at: at) }
    }

    /// Records a consent (its signature evidence encrypted), marking `supersede` superseded,
    /// with its audit event.
    public func recordConsent(
        _ consent: Consent, participant: ParticipantHandle, signatureEvidence: String?, supersede: [UUID], actor: String, at: Date
    ) throws {
        try writeTransaction { t in
            try t.operations.recordConsent(
                t.seam, consent, participant: participant, signatureEvidence: signatureEvidence, supersede: supersede, actor: actor, at: at)
        }
    }

    /// Withdraws the participant in `mode` (stop, exclude, erase) with its audit event; after an
    /// erase, removes what the deleted rows left behind (``purgeDeletedData()``).
    @discardableResult
    public func withdraw(
        _ participant: ParticipantHandle, participantID: UUID, mode: WithdrawalMode, at: Timestamp, by: String, actor: String,
        reason: String?, consentVersion: String?, receiptID: UUID
    ) throws -> WithdrawalCounts {
        let counts = try writeTransaction { t in
            try t.operations.withdraw(
                t.seam, participant, participantID: participantID, mode: mode, at: at, by: by, actor: actor, reason: reason,
                consentVersion: consentVersion, receiptID: receiptID)
        }
        if counts.identifiersErased { try purgeDeletedData() }
        return counts
    }

    /// Runs `body` in one transaction with a sink for the file's records, then records the batch
    /// and its `data.import` event; nothing is stored when `body` throws.
    public func importBatch(
        _ info: ImportBatchInfo, actor: String, at: Date,
        body: (any RecordSink) throws -> (total: Int, inserted: Int, duplicates: Int, rejected: Int)
    ) throws -> ImportBatchResult {
        try importTransaction { t in try t.operations.importBatch(t.seam, info, actor: actor, at: at, body: body) }
    }

    /// Appends an audit event in its own transaction. `redactable` details (free text a person
    /// typed) are kept out of the chain as salted hashes and can be erased with participant `owner`.
    @discardableResult
    public func appendEvent(_ entry: AuditEntry, at: Date) throws -> AuditEvent {
        try writeTransaction { t in try t.operations.appendEvent(t.seam, entry, at: at) }
    }

    /// Signs the chain's head, unless it is already signed; nil for an empty chain.
    @discardableResult
    public func checkpoint(signingKey: Ed25519PrivateKey, accepting: CheckpointSigners? = nil, at: Date) throws -> AuditCheckpoint? {
        try writeTransaction { t in try t.operations.checkpoint(t.seam, signingKey: signingKey, accepting: accepting, at: at) }
    }

    /// Appends `export.create` unless a participant in `participantIDs` withdrew (exclude or
    /// erase) after the audit event `snapshotSeq`; the check and the append are one transaction.
    public func commitExport(
        snapshotSeq: Int64, participantIDs: Set<UUID>, actor: String, subject: String?, details: [String: String], at: Date
    ) throws -> ExportCommitResult {
        try writeTransaction { t in
            try t.operations.commitExport(
                t.seam, snapshotSeq: snapshotSeq, participantIDs: participantIDs, actor: actor, subject: subject, details: details, at: at)
        }
    }
}
