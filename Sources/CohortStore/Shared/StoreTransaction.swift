package import CohortCore
package import Foundation

/// The seam between the study's operations and a database: one open write transaction and the
/// typed row primitives the operations in ``StudyOperations`` are written with.
///
/// Each store implements it once, as SQL in its dialect and its locking (SQLite holds the
/// database's write lock for the whole transaction, so its locks are no-ops; on PostgreSQL the
/// server's functions lock and write the audit chain, and participants' rows are locked). What a primitive means —
/// which rows, which columns — is the same for both; what an operation does with them (what an
/// erase deletes, what the audit chain commits to) is decided once, in ``StudyOperations``.
/// Errors name the table, row and column, never a value.
package protocol StoreTransaction {
    /// Where the database is, for messages.
    var location: String { get }

    // MARK: Audit chain

    /// Makes this transaction the audit chain's only appender until it ends (re-entrant).
    func lockAuditChain() throws
    /// The newest event's seq and hash, or nil for an empty chain.
    func auditHead() throws -> (seq: Int64, hash: String)?
    /// Appends the event that follows the chain's head — numbered, linked and hashed under the
    /// chain's lock — and returns it as stored. `actor` and `details` are the committed values
    /// (redactable texts already references). SQLite computes the event here (AuditChain); on
    /// PostgreSQL the server does (`cohort_append_event`), adding the login role that appended
    /// as `details.db_role`, so no coordinator can write a row of the chain itself.
    func appendEvent(at: String, actor: String, action: String, subject: String?, details: [String: String]) throws -> AuditEvent
    /// The `participant.withdraw` events after `seq` whose mode is one of `modes`, oldest first
    /// (redactable texts not revealed).
    func withdrawalEvents(after seq: Int64, modes: [WithdrawalMode]) throws -> [AuditEvent]
    /// The signed checkpoint of event `seq`, if there is one.
    func checkpoint(seq: Int64) throws -> AuditCheckpoint?
    /// Stores a signed checkpoint of the chain's head made at `at` (as events write instants);
    /// on PostgreSQL through the server (`cohort_append_checkpoint`), which takes the head's hash
    /// from the chain itself and records the login role that wrote it.
    func insertCheckpoint(_ checkpoint: AuditCheckpoint, at: String) throws
    /// Stores a sealed redactable text concerning participant `owner` (nil: nobody's).
    func insertRedactable(_ text: RedactableText, owner: String?) throws
    /// Deletes every redactable text concerning participant `owner` (an erased participant; on
    /// PostgreSQL through `cohort_erase_redactable`, the only way a site role deletes one).
    func deleteRedactable(owner: String) throws

    // MARK: Study and protocol

    /// The id of the study this database holds, nil before the first protocol is pinned.
    func studyID() throws -> String?
    /// Inserts the one `study` row.
    func insertStudy(id: String, createdAt: String) throws
    /// The current protocol revision's SHA-256 and revision number, if one is pinned.
    func currentProtocolRevision() throws -> (sha256: String, revision: Int64)?
    /// Inserts a protocol revision as the current one (the previous one stops being current).
    func insertCurrentProtocolRevision(_ row: NewProtocolRevisionRow) throws
    /// Inserts a template pinned with protocol `protocolSHA256`.
    func insertTemplate(protocolSHA256: String, path: String, content: Data) throws

    // MARK: Participants

    /// True when a participant has study code `code`.
    func participantExists(code: String) throws -> Bool
    /// Inserts a participant row.
    func insertParticipant(_ row: NewParticipantRow) throws
    /// Locks the participant's row for the rest of the transaction (an import still writing
    /// their records finishes first); false when there is no such participant.
    func lockParticipant(_ participant: ParticipantHandle) throws -> Bool
    /// The number of the participant's rows in `table`.
    func count(_ table: ParticipantTable, of participant: ParticipantHandle) throws -> Int
    /// Sets the participant's status; the first withdrawal instant is kept.
    func markWithdrawn(_ participant: ParticipantHandle, status: ParticipantStatus, at: Timestamp) throws
    /// Clears the participant's identifiers and withdrawal token and replaces their study code.
    func eraseIdentity(_ participant: ParticipantHandle, code: String) throws

    // MARK: Imports

    /// Inserts an import batch with no counts yet; its id.
    func insertImportBatch(_ info: ImportBatchInfo, importedAt: String) throws -> Int64
    /// The sink an import batch's records go into, inside this transaction.
    func recordSink(batchID: Int64, piiKey: [UInt8]) throws -> any StoreRecordSink
    /// The site of the participant with internal id `id` (lower-case), nil when it has none or
    /// the store keeps one key for every participant (its key ring chooses by site).
    func participantSite(id: String) throws -> String?
    /// The site of `participant` (as ``participantSite(id:)``).
    func participantSite(_ participant: ParticipantHandle) throws -> String?
    /// The participants who are not active or have a withdrawal time (few).
    func withdrawnParticipants() throws -> [(key: Int64, status: String, withdrawnAtMs: Int64?)]
    /// Whether ``completeImportBatch(_:counts:fileSHA256:actor:)`` records the file's SHA-256
    /// (then the batch row may be inserted before the digest is known). PostgreSQL: no — a site
    /// coordinator's role may not change a batch's digest, so it is inserted with it.
    var completesImportDigest: Bool { get }
    /// Records the batch's counts and its actor (the committed value of its audit event), and
    /// the file's SHA-256 when ``completesImportDigest``.
    func completeImportBatch(_ id: Int64, counts: ImportCounts, fileSHA256: String, actor: String) throws

    // MARK: Consents, withdrawals, records

    /// Inserts a consent row (`signature`: the sealed evidence).
    func insertConsent(_ consent: Consent, participant: ParticipantHandle, signature: [UInt8]?) throws
    /// Marks the participant's consent `id` superseded if it is active.
    func supersedeConsent(_ id: UUID, of participant: ParticipantHandle) throws
    /// Marks the participant's active consents withdrawn.
    func withdrawActiveConsents(of participant: ParticipantHandle) throws
    /// Deletes the sealed signature evidence of every consent of the participant.
    func deleteSignatureEvidence(of participant: ParticipantHandle) throws
    /// Inserts a withdrawal row.
    func insertWithdrawal(_ row: NewWithdrawalRow) throws
    /// Deletes every record of the participant (an erased one; on PostgreSQL through
    /// `cohort_erase_records`, the only way a site role deletes records).
    func deleteRecords(of participant: ParticipantHandle) throws
}

/// The tables whose rows belong to one participant.
package enum ParticipantTable: String, Sendable {
    case records, consents
}

/// A participant row to insert: the participant, their identity sealed (one value per
/// ``PIISealing/identityColumns`` entry) and their withdrawal token's salt and hash.
package struct NewParticipantRow: Sendable {
    package var participant: Participant
    package var sealedIdentity: [[UInt8]?]
    package var tokenSalt: [UInt8]
    package var tokenHash: [UInt8]
    /// The enrolment instant as audit events write it.
    package var createdAt: String
}

/// A withdrawal row to insert. `actor` and `reason` are the committed values (redactable
/// references, as the withdrawal's audit event holds them).
package struct NewWithdrawalRow: Sendable {
    package var id: UUID
    package var participant: ParticipantHandle
    package var mode: WithdrawalMode
    package var at: Timestamp
    package var by: String
    package var actor: String
    package var reason: String?
    package var consentVersion: String?
    package var countsJSON: String
}

/// A protocol revision to pin: its canonical JSON and where it was loaded from.
package struct NewProtocolRevisionRow: Sendable {
    package var sha256: String
    package var studyID: String
    package var revision: Int64
    package var canonicalJSON: Data
    package var sourcePath: String?
    package var loadedAt: String
}

/// What an import's body reports: rows read, stored, duplicates and rejected.
package typealias ImportCounts = (total: Int, inserted: Int, duplicates: Int, rejected: Int)

/// A store's record sink as the import operation drives it.
package protocol StoreRecordSink: RecordSink {
    /// The participants the sink wrote, with the latest start of each.
    var imported: ImportedParticipants { get }
    /// Gives up the rows in flight after the import's body threw (PostgreSQL ends its COPY).
    func abandon()
    /// Writes every queued row and checks, once for the batch, what the store would otherwise
    /// check row by row (SQLite: that every participant and the batch written to exist).
    func finish() throws
}

extension StoreRecordSink {
    /// Writes every queued row (the store checked each row as it was written).
    package func finish() throws { try flush() }
}

extension StoreTransaction {
    /// The digest is known when the batch row is inserted (see ``completesImportDigest``).
    package var completesImportDigest: Bool { false }
    /// One key for every participant (SQLite): no site to look up.
    package func participantSite(id: String) throws -> String? { nil }
    package func participantSite(_ participant: ParticipantHandle) throws -> String? { nil }
}
