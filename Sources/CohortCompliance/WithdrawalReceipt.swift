public import CohortCore
public import Foundation

/// The content of the receipt a participant gets when they withdraw. CohortKit renders it as
/// text and signs `canonicalBytes()`; this type only models it.
public struct WithdrawalReceipt: Sendable, Hashable, Codable {
    /// The schema identifier of this JSON shape.
    package static let schemaID = "cohort/withdrawal-receipt@1"

    /// Who asked for the withdrawal.
    public enum Requester: String, Sendable, Hashable, Codable, CaseIterable {
        /// The participant, with their withdrawal token.
        case participant
        /// Study staff (the reason is kept in the audit trail, not on the receipt).
        case staff
    }

    /// What the withdrawal affected, in counts.
    public struct Counts: Sendable, Hashable, Codable {
        /// Records deleted (erase).
        package var recordsDeleted: Int
        /// Records kept (stop and exclude keep them; exclude leaves them out of exports).
        package var recordsRetained: Int
        /// Identifier fields deleted (erase).
        package var identifiersDeleted: Int
        /// Consent rows kept as evidence (always kept).
        package var consentsRetained: Int

        /// Creates counts.
        package init(recordsDeleted: Int, recordsRetained: Int, identifiersDeleted: Int, consentsRetained: Int) {
            self.recordsDeleted = recordsDeleted
            self.recordsRetained = recordsRetained
            self.identifiersDeleted = identifiersDeleted
            self.consentsRetained = consentsRetained
        }

        enum CodingKeys: String, CodingKey {
            case recordsDeleted = "records_deleted"
            case recordsRetained = "records_retained"
            case identifiersDeleted = "identifiers_deleted"
            case consentsRetained = "consents_retained"
        }
    }

    /// Schema identifier (`cohort/withdrawal-receipt@1`).
    public var schema: String = WithdrawalReceipt.schemaID
    /// Random id of this receipt (injected).
    public var receiptID: UUID
    /// The protocol's study id.
    public var studyID: String
    /// The protocol revision in force.
    public var protocolRevision: Int
    /// The participant's study code (the receipt is for the participant).
    public var participantCode: String
    /// The withdrawal mode now in force.
    public var mode: WithdrawalMode
    /// The mode before, when this receipt records an escalation.
    public var previousMode: WithdrawalMode?
    /// When the participant withdrew (the first withdrawal's instant after an escalation).
    public var withdrawnAt: Timestamp
    /// When the receipt was issued.
    public var issuedAt: Timestamp
    /// Who asked.
    public var requestedBy: Requester
    /// The consent version in force at the withdrawal, if any.
    public var consentVersion: String?
    /// What was affected.
    public var counts: Counts

    /// Creates a receipt.
    package init(
        receiptID: UUID, studyID: String, protocolRevision: Int, participantCode: String, mode: WithdrawalMode,
        previousMode: WithdrawalMode? = nil, withdrawnAt: Timestamp, issuedAt: Timestamp, requestedBy: Requester,
        consentVersion: String?, counts: Counts
    ) {
        self.receiptID = receiptID
        self.studyID = studyID
        self.protocolRevision = protocolRevision
        self.participantCode = participantCode
        self.mode = mode
        self.previousMode = previousMode
        self.withdrawnAt = withdrawnAt
        self.issuedAt = issuedAt
        self.requestedBy = requestedBy
        self.consentVersion = consentVersion
        self.counts = counts
    }

    /// A receipt for carrying out `plan` under `studyProtocol`.
    package init(
        plan: WithdrawalPlan, studyProtocol: StudyProtocol, participantCode: String, receiptID: UUID, issuedAt: Timestamp,
        requestedBy: Requester, consentVersion: String?, counts: Counts
    ) {
        self.init(
            receiptID: receiptID, studyID: studyProtocol.id, protocolRevision: studyProtocol.revision, participantCode: participantCode,
            mode: plan.mode, previousMode: plan.previousMode, withdrawnAt: plan.withdrawnAt, issuedAt: issuedAt, requestedBy: requestedBy,
            consentVersion: consentVersion, counts: counts)
    }

    /// The bytes to sign: canonical JSON (sorted keys, no white space). Absent values are
    /// written as `null` so every receipt has the same keys.
    package func canonicalBytes() throws -> Data { try CanonicalJSON.encode(self) }

    enum CodingKeys: String, CodingKey {
        case schema, mode, counts
        case receiptID = "receipt_id"
        case studyID = "study_id"
        case protocolRevision = "protocol_revision"
        case participantCode = "participant_code"
        case previousMode = "previous_mode"
        case withdrawnAt = "withdrawn_at"
        case issuedAt = "issued_at"
        case requestedBy = "requested_by"
        case consentVersion = "consent_version"
    }

    /// Encodes every key, absent values as `null`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(schema, forKey: .schema)
        try c.encode(receiptID, forKey: .receiptID)
        try c.encode(studyID, forKey: .studyID)
        try c.encode(protocolRevision, forKey: .protocolRevision)
        try c.encode(participantCode, forKey: .participantCode)
        try c.encode(mode, forKey: .mode)
        try c.encode(previousMode, forKey: .previousMode)
        try c.encode(withdrawnAt, forKey: .withdrawnAt)
        try c.encode(issuedAt, forKey: .issuedAt)
        try c.encode(requestedBy, forKey: .requestedBy)
        try c.encode(consentVersion, forKey: .consentVersion)
        try c.encode(counts, forKey: .counts)
    }
}
