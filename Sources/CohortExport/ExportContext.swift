public import CohortCore

/// What an export is made under: the protocol and policy it follows, who receives it, when it
/// was made, and which formats to write.
public struct ExportContext: Sendable {
    /// The protocol the export follows (its de-identification policy decides the columns).
    public var studyProtocol: StudyProtocol
    /// SHA-256 (hex) of the pinned protocol.
    public var protocolSHA256: String
    /// SHA-256 (hex) of the canonical de-identification policy.
    public var policySHA256: String
    /// The recipient's identifier (pseudonyms are specific to it).
    public var recipient: String
    /// The export time; written as `transactionTime`, Provenance `recorded` and `study.json`.
    public var createdAt: Timestamp
    /// `cohort` version, named in Provenance and `study.json`.
    public var toolVersion: String
    /// Participants left out of the export: reason → count.
    public var exclusions: [String: Int]
    /// The formats to write; folders for the others are not created.
    public var formats: Set<ExportFormat>
    /// The FHIR shapes to write (with `fhir` in `formats`): Bulk NDJSON by default.
    public var fhirLayout: FHIRLayout
    /// Also write one transaction Bundle per participant (`bundles/<pseudonym>.transaction.json`),
    /// ready to POST to a FHIR server.
    public var fhirTransactions: Bool

    /// Creates an export context.
    public init(
        studyProtocol: StudyProtocol, protocolSHA256: String, policySHA256: String, recipient: String, createdAt: Timestamp,
        toolVersion: String, exclusions: [String: Int], formats: Set<ExportFormat>, fhirLayout: FHIRLayout = .bulk,
        fhirTransactions: Bool = false
    ) {
        self.fhirLayout = fhirLayout
        self.fhirTransactions = fhirTransactions
        self.studyProtocol = studyProtocol
        self.protocolSHA256 = protocolSHA256
        self.policySHA256 = policySHA256
        self.recipient = recipient
        self.createdAt = createdAt
        self.toolVersion = toolVersion
        self.exclusions = exclusions
        self.formats = formats
    }
}
