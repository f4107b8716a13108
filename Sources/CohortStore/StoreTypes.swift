public import CohortCore
import CohortCrypto
public import Foundation

/// What a withdrawal affected, by count.
public struct WithdrawalCounts: Sendable, Hashable, Codable {
    public var records: Int
    public var consents: Int
    public var identifiersErased: Bool

    public init(records: Int, consents: Int, identifiersErased: Bool) {
        self.records = records
        self.consents = consents
        self.identifiersErased = identifiersErased
    }

    enum CodingKeys: String, CodingKey {
        case records, consents
        case identifiersErased = "identifiers_erased"
    }
}

/// A withdrawal as stored.
public struct StoredWithdrawal: Sendable, Hashable, Codable {
    public var id: UUID
    public var mode: WithdrawalMode
    public var at: Timestamp
    /// `participant` or `staff`.
    public var by: String
    public var actor: String
    public var reason: String?
    public var consentVersion: String?
    public var counts: WithdrawalCounts

    /// A withdrawal as a store read it (for the stores only).
    package init(
        id: UUID, mode: WithdrawalMode, at: Timestamp, by: String, actor: String, reason: String?, consentVersion: String?, counts: WithdrawalCounts
    ) {
        self.id = id
        self.mode = mode
        self.at = at
        self.by = by
        self.actor = actor
        self.reason = reason
        self.consentVersion = consentVersion
        self.counts = counts
    }

    enum CodingKeys: String, CodingKey {
        case id, mode, at, by, actor, reason, counts
        case consentVersion = "consent_version"
    }
}

/// What ``SQLiteStudyStore/commitExport(snapshotSeq:participantIDs:actor:subject:details:at:)`` did.
public enum ExportCommitResult: Sendable, Equatable {
    /// `export.create` was appended.
    case committed(AuditEvent)
    /// Participants of the export withdrew (exclude or erase) after the snapshot; nothing was
    /// appended. Their internal ids, in the order the withdrawals committed.
    case withdrawnSinceSnapshot([UUID])
}

/// A participant as the store keeps them, with the handle the store's other calls take.
public struct StoredParticipant: Sendable, Hashable {
    /// Names this participant's rows in calls back to the store (opaque: no row key leaves it).
    public var handle: ParticipantHandle
    /// The participant (identity decrypted only when asked).
    public var participant: Participant

    /// A participant as a store read it (for the stores only).
    package init(handle: ParticipantHandle, participant: Participant) {
        self.handle = handle
        self.participant = participant
    }
}

/// A participant to enroll, with the withdrawal token's salted hash.
public struct Enrollment: Sendable {
    public var participant: Participant
    public var identity: ParticipantIdentity
    public var tokenSalt: [UInt8]
    public var tokenHash: [UInt8]

    public init(participant: Participant, identity: ParticipantIdentity, tokenSalt: [UInt8], tokenHash: [UInt8]) {
        self.participant = participant
        self.identity = identity
        self.tokenSalt = tokenSalt
        self.tokenHash = tokenHash
    }
}

/// A protocol revision pinned in the store.
public struct PinnedProtocol: Sendable {
    public var studyProtocol: StudyProtocol
    /// SHA-256 (hex) of the canonical JSON.
    public var sha256: String
    public var canonicalJSON: Data

    /// A pinned revision as a store read it (for the stores only).
    package init(studyProtocol: StudyProtocol, sha256: String, canonicalJSON: Data) {
        self.studyProtocol = studyProtocol
        self.sha256 = sha256
        self.canonicalJSON = canonicalJSON
    }

    /// Checks that `canonicalJSON`, as a store read it, still has the SHA-256 it is pinned by:
    /// every read of the protocol re-hashes it, so a stored policy changed behind cohort's back
    /// (an UPDATE by whoever may write the table, a restored or edited database file) stops
    /// every command instead of silently governing exports that name the pinned digest.
    /// Throws `.integrity` naming the table and column, never the content.
    package static func checkPin(sha256: String, canonicalJSON: Data, location: String) throws {
        guard SHA256.hex(canonicalJSON) == sha256 else {
            throw CohortError(
                .integrity, "the stored protocol no longer matches the SHA-256 it was pinned by (protocol_revisions.canonical_json was changed)",
                at: .init(file: location, field: "protocol_revisions.canonical_json"),
                hint: "do not use this database until the change is explained; the owner reloads the approved protocol file as a new revision, or restores the database")
        }
    }
}

/// What an import batch stored.
public struct ImportBatchResult: Sendable, Codable, Hashable {
    public var batchID: Int64
    public var rowsTotal: Int
    public var inserted: Int
    public var duplicates: Int
    public var rejected: Int

    public init(batchID: Int64, rowsTotal: Int, inserted: Int, duplicates: Int, rejected: Int) {
        self.batchID = batchID
        self.rowsTotal = rowsTotal
        self.inserted = inserted
        self.duplicates = duplicates
        self.rejected = rejected
    }

    enum CodingKeys: String, CodingKey {
        case inserted, duplicates, rejected
        case batchID = "batch_id"
        case rowsTotal = "rows_total"
    }
}

/// The import file's description, for the batch row and audit event (no content).
public struct ImportBatchInfo: Sendable {
    public var fileName: String
    public var fileSHA256: String
    public var format: String
    /// When set, the file's SHA-256 is still being computed (on another thread, while the rows
    /// are imported): the batch row is written with `fileSHA256` first and completed with this
    /// digest after the last row, in the same transaction; the audit event names this digest.
    public var pendingSHA256: (@Sendable () throws -> String)?
    public init(fileName: String, fileSHA256: String, format: String, pendingSHA256: (@Sendable () throws -> String)? = nil) {
        self.fileName = fileName
        self.fileSHA256 = fileSHA256
        self.format = format
        self.pendingSHA256 = pendingSHA256
    }
}
