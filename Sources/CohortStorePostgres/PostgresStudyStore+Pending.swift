// SKELETON: every method here is to be replaced by a real implementation in its own file
// (PostgresStudyStore+Audit.swift, +Participants, +Consents, +Protocols, +Exports: the "core"
// engineer; PostgresStudyStore+Records.swift and PostgresRecordSink.swift: the "records"
// engineer). This file must be empty (deleted) before the branch is merged into main.
public import CohortCore
public import CohortCrypto
public import CohortStore
public import Foundation

extension PostgresStudyStore {
    static func notBuilt(_ name: String) -> CohortError {
        CohortError(.system, "\(name) is not built on PostgreSQL yet")
    }

    // core engineer
    public func purgeDeletedData() throws { throw Self.notBuilt(#function) }
    public func pinProtocol(_ loaded: LoadedProtocol, templates: [String: Data], actor: String, at: Date) throws -> PinnedProtocol { throw Self.notBuilt(#function) }
    public func currentProtocol() throws -> PinnedProtocol? { throw Self.notBuilt(#function) }
    public func template(path: String, protocolSHA256: String) throws -> Data? { throw Self.notBuilt(#function) }
    public func enroll(_ enrollments: [Enrollment], actor: String, source: String, at: Date) throws { throw Self.notBuilt(#function) }
    public func participants(withIdentities: Bool) throws -> [StoredParticipant] { throw Self.notBuilt(#function) }
    public func participant(code: String, withIdentity: Bool) throws -> StoredParticipant? { throw Self.notBuilt(#function) }
    public func withdrawalTokenHash(_ participant: ParticipantHandle) throws -> (salt: [UInt8], hash: [UInt8])? { throw Self.notBuilt(#function) }
    public func recordConsent(
        _ consent: Consent, participant: ParticipantHandle, signatureEvidence: String?, supersede: [UUID], actor: String, at: Date
    ) throws { throw Self.notBuilt(#function) }
    public func consentHistory(_ participant: ParticipantHandle, participantID: UUID) throws -> [Consent] { throw Self.notBuilt(#function) }
    public func consentHistories() throws -> [UUID: [Consent]] { throw Self.notBuilt(#function) }
    public func withdrawal(_ participant: ParticipantHandle) throws -> StoredWithdrawal? { throw Self.notBuilt(#function) }
    public func withdraw(
        _ participant: ParticipantHandle, participantID: UUID, mode: WithdrawalMode, at: Timestamp, by: String, actor: String,
        reason: String?, consentVersion: String?, receiptID: UUID
    ) throws -> WithdrawalCounts { throw Self.notBuilt(#function) }
    public func appendEvent(_ entry: AuditEntry, at: Date) throws -> AuditEvent { throw Self.notBuilt(#function) }
    public func checkpoint(signingKey: Ed25519PrivateKey, at: Date) throws -> AuditCheckpoint? { throw Self.notBuilt(#function) }
    public func latestCheckpoint() throws -> AuditCheckpoint? { throw Self.notBuilt(#function) }
    public func auditHead() throws -> (seq: Int64, hash: String)? { throw Self.notBuilt(#function) }
    public func auditEventHash(seq: Int64) throws -> String? { throw Self.notBuilt(#function) }
    public func auditHeadFileEstablished() throws -> Bool { throw Self.notBuilt(#function) }
    public func auditEvents(since: Int64, limit: Int?, revealing: Bool) throws -> [AuditEvent] { throw Self.notBuilt(#function) }
    public func verifyAudit(publicKey: Ed25519PublicKey) throws -> AuditVerification { throw Self.notBuilt(#function) }
    public func commitExport(
        snapshotSeq: Int64, participantIDs: Set<UUID>, actor: String, subject: String?, details: [String: String], at: Date
    ) throws -> ExportCommitResult { throw Self.notBuilt(#function) }
    public func exportEvents(exportID: String) throws -> [AuditEvent] { throw Self.notBuilt(#function) }
    public func exportCreateEvents(archiveSHA256 sha256: String) throws -> [AuditEvent] { throw Self.notBuilt(#function) }
}
