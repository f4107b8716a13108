public import CohortCore
public import CohortCrypto
public import Foundation

/// The study's database, as the use cases see it: participants, consents, records, imports,
/// withdrawals, the audit trail with its checkpoints, and exports.
///
/// Two stores implement it: ``SQLiteStudyStore`` (one `study.db` file, the embedded default) and
/// `PostgresStudyStore` (a PostgreSQL database shared by the coordinators of a multi-site study).
/// Both keep the same promises:
/// - direct identifiers, notes and redactable audit texts are encrypted with `pii.key` before
///   they reach the database;
/// - every state change appends its audit event in the same transaction, and the audit chain
///   is appended by one writer at a time;
/// - errors name the table, row and column, never a value.
public protocol StudyStore: AnyObject, Sendable {
    /// Where the database is, for messages: the `study.db` path, or a PostgreSQL URL without
    /// its password.
    var location: String { get }
    /// True when opened read-only.
    var isReadOnly: Bool { get }
    /// The name of the newest schema migration this store's database has.
    var schemaVersion: String { get }
    /// True when this store could be reopened for writing (a read-only auditor's copy cannot).
    var canBeWritten: Bool { get }
    /// The same database opened again with `options` (a read-only command reopens it writable to
    /// close a killed export).
    func reopened(options: StoreOpenOptions) throws -> any StudyStore
    /// Runs `body` in one write transaction of this store. The study's operations
    /// (``enroll(_:actor:source:at:)``, ``withdraw(_:participantID:mode:at:by:actor:reason:consentVersion:receiptID:)``, …) are written
    /// once, in this module, over it; ``StoreWriteTransaction`` offers nothing outside it.
    func writeTransaction<T>(_ body: (StoreWriteTransaction) throws -> T) throws -> T
    /// Runs `body` in one write transaction meant for a bulk import (``writeTransaction(_:)``
    /// with what the store tunes for many inserts; SQLite: statement journals in memory).
    func importTransaction<T>(_ body: (StoreWriteTransaction) throws -> T) throws -> T
    /// Removes what deleted rows leave behind where the store can (SQLite: truncates the
    /// write-ahead log; PostgreSQL: vacuums the tables an erase touched). Called after an erase.
    func purgeDeletedData() throws

    // MARK: Protocols

    /// The current protocol revision, if one is pinned.
    func currentProtocol() throws -> PinnedProtocol?
    /// The protocol revision pinned with SHA-256 `sha256` (current or not), if this store has it;
    /// its stored JSON re-hashed against that digest.
    func protocolRevision(sha256: String) throws -> PinnedProtocol?
    /// A template pinned with the protocol revision `protocolSHA256`.
    func template(path: String, protocolSHA256: String) throws -> Data?

    // MARK: Participants

    /// Every participant, by study code; identities decrypted only when asked.
    func participants(withIdentities: Bool) throws -> [StoredParticipant]
    /// Calls `body` with every participant, by study code, read through a cursor (one read
    /// transaction, a few rows in memory at a time); identities decrypted only when asked.
    func forEachParticipant(withIdentities: Bool, _ body: (StoredParticipant) throws -> Void) throws
    /// The participant with study code `code`.
    func participant(code: String, withIdentity: Bool) throws -> StoredParticipant?
    /// The salted hash of the participant's withdrawal token, if they have one.
    func withdrawalTokenHash(_ participant: ParticipantHandle) throws -> (salt: [UInt8], hash: [UInt8])?

    // MARK: Consents and withdrawals

    /// The participant's consents, oldest first.
    func consentHistory(_ participant: ParticipantHandle, participantID: UUID) throws -> [Consent]
    /// Every participant's consents, oldest first.
    func consentHistories() throws -> [UUID: [Consent]]
    /// The participant's latest withdrawal.
    func withdrawal(_ participant: ParticipantHandle) throws -> StoredWithdrawal?

    // MARK: Records

    /// Streams the participant's records, by start then kind.
    func forEachRecord(_ participant: ParticipantHandle, participantID: UUID, _ body: (CohortCore.Record) throws -> Void) throws
    /// Streams the participant's records — the records ``forEachRecord(_:participantID:_:)``
    /// streams — each with its participant, kind, start, end and source only: no value, text or
    /// note (nothing is decrypted). Kind by kind (in byte order), each kind by start then source
    /// (the order of the store's unique key: SQLite sorts nothing), so each kind's records come in
    /// `forEachRecord`'s order. What the export's k-anonymity profiles read
    /// (`Deidentifier.startAndSourceFields(of:)` of each record; a published start depends only
    /// on the earlier records of its kind).
    func forEachRecordStartAndSource(_ participant: ParticipantHandle, participantID: UUID, _ body: (CohortCore.Record) throws -> Void) throws
    /// Runs `body` with `count` record readers, one for each thread of a pass over many
    /// participants, and closes them when it returns or throws (do not keep them). Both stores
    /// give each its own read-only connection, so the threads read at once (SQLite: beside the
    /// write-ahead log) and a reader may wait inside a read (``StoreRecordReader/hasOwnConnection``).
    func withRecordReaders<T>(_ count: Int, _ body: ([any StoreRecordReader]) throws -> T) throws -> T
    /// Streams every record's participant, kind and start (for compliance).
    func forEachRecordStart(_ body: (ParticipantHandle, RecordKind, Timestamp) throws -> Void) throws
    /// The number of records, of one participant or of all.
    func recordCount(_ participant: ParticipantHandle?) throws -> Int
    /// Row counts of the main tables.
    func counts() throws -> [String: Int]
    /// Frees what the store's own connection keeps cached from earlier reads: SQLite's page cache
    /// (up to its default 2 MB, and it fills with whatever the command read — a full audit trail
    /// of a large study; issue 28, twelfth round); nothing on PostgreSQL, whose cache is the
    /// server's. A long command calls it before a stage that reads through other connections, so
    /// that stage's peak memory does not carry the earlier stages' pages.
    func releaseCachedMemory()

    // MARK: Audit trail

    /// The newest signed checkpoint.
    func latestCheckpoint() throws -> AuditCheckpoint?
    /// The newest event's sequence number and hash.
    func auditHead() throws -> (seq: Int64, hash: String)?
    /// The hash of event `seq`, if it exists.
    func auditEventHash(seq: Int64) throws -> String?
    /// True when the chain records that this workspace keeps an `audit.head` file.
    func auditHeadFileEstablished() throws -> Bool
    /// Events from `since`, oldest first; redactable texts revealed when asked and still stored.
    func auditEvents(since: Int64, limit: Int?, revealing: Bool) throws -> [AuditEvent]
    /// Recomputes the chain and checks that each checkpoint is signed by one of `signers`.
    func verifyAudit(signers: CheckpointSigners) throws -> AuditVerification
    /// The events with this action, oldest first, not revealed (e.g. `site.key_registered`).
    func auditEvents(action: String) throws -> [AuditEvent]

    // MARK: Exports

    /// The `export.*` events of one export, oldest first.
    func exportEvents(exportID: String) throws -> [AuditEvent]
    /// The `export.create` events naming the archive with this SHA-256.
    func exportCreateEvents(archiveSHA256 sha256: String) throws -> [AuditEvent]
}

extension StudyStore {
    /// A plain ``writeTransaction(_:)`` unless the store tunes bulk imports.
    public func importTransaction<T>(_ body: (StoreWriteTransaction) throws -> T) throws -> T { try writeTransaction(body) }

    /// Every participant, by study code, without identities.
    public func participants() throws -> [StoredParticipant] { try participants(withIdentities: false) }
    /// The participant with study code `code`, without identity.
    public func participant(code: String) throws -> StoredParticipant? { try participant(code: code, withIdentity: false) }
    /// The number of records of all participants.
    public func recordCount() throws -> Int { try recordCount(nil) }
    /// Recomputes the chain and checks every checkpoint's signature with `publicKey`.
    public func verifyAudit(publicKey: Ed25519PublicKey) throws -> AuditVerification {
        try verifyAudit(signers: CheckpointSigners(only: publicKey))
    }
    /// Every event from `since` (default the first), revealed.
    public func auditEvents(since: Int64 = 1, limit: Int? = nil) throws -> [AuditEvent] {
        try auditEvents(since: since, limit: limit, revealing: true)
    }
    /// Appends an audit event in its own transaction.
    @discardableResult
    public func appendEvent(
        actor: String, action: String, subject: String? = nil, details: [String: String] = [:], redactable: [String: String] = [:],
        owner: String? = nil, at: Date
    ) throws -> AuditEvent {
        try appendEvent(AuditEntry(actor: actor, action: action, subject: subject, details: details, redactable: redactable, owner: owner), at: at)
    }
}

/// An audit event to append.
public struct AuditEntry: Sendable {
    /// Who acted (stored as a redactable text).
    public var actor: String
    /// What happened (`participant.enroll`).
    public var action: String
    /// The participant's internal id or the object acted on, if any.
    public var subject: String?
    /// Details the chain commits to as they are (no personal data).
    public var details: [String: String]
    /// Details that may hold personal data (free text a person typed): the chain commits to
    /// their salted hashes, and they can be erased with participant `owner`.
    public var redactable: [String: String]
    /// The participant the redactable details may concern.
    public var owner: String?

    /// An entry; only `actor` and `action` are required.
    public init(
        actor: String, action: String, subject: String? = nil, details: [String: String] = [:], redactable: [String: String] = [:],
        owner: String? = nil
    ) {
        self.actor = actor
        self.action = action
        self.subject = subject
        self.details = details
        self.redactable = redactable
        self.owner = owner
    }
}

/// Audit actions the stores and use cases agree on.
public enum StoreAuditActions {
    /// Audit actions that close an `export.begin` (matched on its `export_id` detail).
    public static let exportClosing = ["export.create", "export.abandoned", "export.refused"]
}

/// Where an import's records go, inside the import's transaction.
public protocol RecordSink: AnyObject {
    /// Rows `add` has stored so far (duplicates not counted). Complete after `flush()`.
    var insertedCount: Int { get }
    /// Inserts `record` now; false when the same record (participant, kind, start, source) is
    /// already stored. Writes queued rows first.
    func insert(_ record: CohortCore.Record, participant: ParticipantHandle) throws -> Bool
    /// Queues `record`; rows are written in groups. Call `flush()` after the last one.
    func add(_ record: CohortCore.Record, participant: ParticipantHandle) throws
    /// Writes every queued row.
    func flush() throws
    /// Makes records ready for ``add(_:)`` on any thread — the import's reader, beside this
    /// sink's writer — so the writer only binds and writes them. The default keeps the records
    /// as they are.
    var preparer: RecordPreparer { get }
    /// Queues records made ready by this sink's ``preparer``, in their order, as `add(_:participant:)`
    /// would each of them.
    func add(_ prepared: PreparedRecords) throws
}

extension RecordSink {
    /// Keeps the records as they are: ``add(_:)`` adds them one by one.
    public var preparer: RecordPreparer { RecordPreparer() }

    /// Adds the records one by one (``add(_:participant:)``).
    public func add(_ prepared: PreparedRecords) throws {
        for (participant, record) in prepared.records { try add(record, participant: participant) }
    }
}

/// Turns records into a sink's queued form on any thread (``RecordSink/preparer``). SQLite's
/// inserter (issue 28): its bound rows — the record's text columns in one byte buffer and a
/// non-empty note sealed under pii.key, as the inserter's own `add` does — so the database's
/// writer, the import's one sequential thread, neither encodes nor encrypts nor frees the
/// records' strings.
public struct RecordPreparer: Sendable {
    /// pii.key, when records are sealed into SQLite rows; nil keeps them as they are.
    let sqliteKey: [UInt8]?

    /// A preparer that keeps the records as they are.
    public init() { sqliteKey = nil }

    init(sqliteKey: [UInt8]) { self.sqliteKey = sqliteKey }

    /// `records`, in order, ready for the sink's ``RecordSink/add(_:)``.
    public func prepare(_ records: [(ParticipantHandle, CohortCore.Record)]) throws -> PreparedRecords {
        guard let key = sqliteKey else { return PreparedRecords(records: records, sqlite: nil) }
        var rows = SQLiteRecordInserter.Rows()
        rows.reserve(records.count)
        for (participant, record) in records { try rows.append(record, participantPK: participant.rowKey, piiKey: key) }
        return PreparedRecords(records: [], sqlite: rows)
    }
}

/// Records a ``RecordPreparer`` made ready for its sink.
public struct PreparedRecords: Sendable {
    /// The records as they are (a preparer that keeps them), else empty.
    let records: [(ParticipantHandle, CohortCore.Record)]
    /// SQLite's bound rows (``SQLiteRecordInserter``'s preparer).
    let sqlite: SQLiteRecordInserter.Rows?

    /// How many records.
    public var count: Int { sqlite?.count ?? records.count }

    /// No records.
    public static let none = PreparedRecords(records: [], sqlite: nil)
}
