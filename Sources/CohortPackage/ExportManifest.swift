public import CohortCore

/// The signed description of an export (`<name>.manifest.json`): what was exported, under which
/// protocol and policy, by which tool and key, and the digest of every file.
///
/// Encoded with snake_case keys as canonical pretty JSON (sorted keys) plus a final newline —
/// see ``encoded()`` — and signed byte for byte, so `openssl pkeyutl -verify -rawin` checks it.
/// Exclusions carry reasons and counts only, never who was excluded.
public struct ExportManifest: Sendable, Hashable, Codable {
    /// The format identifier this version writes: `cohort/export-manifest@1`.
    public static let currentFormat = "cohort/export-manifest@1"

    /// The study exported.
    public struct Study: Sendable, Hashable, Codable {
        /// Study id.
        public var id: String
        /// Study title.
        public var title: String

        /// A study reference as given.
        public init(id: String, title: String) {
            self.id = id
            self.title = title
        }
    }

    /// The protocol revision the export was made under.
    public struct ProtocolReference: Sendable, Hashable, Codable {
        /// Protocol revision number.
        public var revision: Int
        /// Lowercase hex SHA-256 of the pinned protocol.
        public var sha256: String

        /// A protocol reference as given.
        public init(revision: Int, sha256: String) {
            self.revision = revision
            self.sha256 = sha256
        }
    }

    /// The `.tar.gz` the manifest describes.
    public struct Archive: Sendable, Hashable, Codable {
        /// File name (no directory).
        public var fileName: String
        /// Lowercase hex SHA-256 of the archive file.
        public var sha256: String
        /// Archive size in bytes.
        public var size: UInt64

        /// An archive reference as given.
        public init(fileName: String, sha256: String, size: UInt64) {
            self.fileName = fileName
            self.sha256 = sha256
            self.size = size
        }

        /// The reference for a written archive.
        public init(_ result: ArchiveResult) {
            self.init(fileName: result.fileName, sha256: result.sha256, size: result.size)
        }

        enum CodingKeys: String, CodingKey {
            case sha256, size
            case fileName = "file_name"
        }
    }

    /// How many participants or records were left out, and why (no identities).
    public struct Exclusion: Sendable, Hashable, Codable {
        /// Why, e.g. `withdrawn_exclude` or `k_anonymity_suppressed`.
        public var reason: String
        /// How many.
        public var count: Int

        /// An exclusion as given.
        public init(reason: String, count: Int) {
            self.reason = reason
            self.count = count
        }
    }

    /// The key that signed the manifest.
    public struct Signer: Sendable, Hashable, Codable {
        /// Always `Ed25519`.
        public var algorithm: String
        /// `SHA256:` + hex SHA-256 of the raw public key (``Ed25519PublicKey/fingerprint``).
        public var keyFingerprint: String
        /// The site whose key signed (a multi-site study's site key); absent for the owner's
        /// and study-wide keys. `cohort verify -w` checks it against the key's registration.
        public var site: String?

        /// A signer as given.
        public init(algorithm: String = "Ed25519", keyFingerprint: String, site: String? = nil) {
            self.algorithm = algorithm
            self.keyFingerprint = keyFingerprint
            self.site = site
        }

        enum CodingKeys: String, CodingKey {
            case algorithm, site
            case keyFingerprint = "key_fingerprint"
        }
    }

    /// The k-anonymity the export achieved, as the de-identification report states it: the
    /// quasi-identifier columns of `participants.csv`, k, and what was generalized or suppressed.
    public struct KAnonymity: Sendable, Hashable, Codable {
        /// The k the protocol asks for.
        public var requestedK: Int
        /// The smallest equivalence class in `participants.csv` (nil when it has no rows).
        public var achievedK: Int?
        /// The quasi-identifier columns of `participants.csv`.
        public var quasiIdentifiers: [String]
        /// Number of equivalence classes.
        public var classes: Int
        /// Column → generalization applied to the whole column (`10-year range`, `quarter`, `suppressed`).
        public var generalized: [String: String]
        /// Column → cells emptied in rows of small classes.
        public var suppressedValues: [String: Int]
        /// Participants left out entirely.
        public var suppressedParticipants: Int
        /// Sensitive fields for l-diversity, as `table.column` of the CSV files.
        public var sensitive: [String]?
        /// What an acquaintance can know from the records, added to the quasi-identifiers for
        /// `recordAchievedK` (issue 27; nil in manifests written before it).
        public var recordQuasiIdentifiers: [String]?
        /// The smallest class over the quasi-identifiers plus `recordQuasiIdentifiers`.
        public var recordAchievedK: Int?
        /// Whether the export reached k over `recordQuasiIdentifiers` too, or only states it.
        public var recordAttributesEnforced: Bool?

        /// A k-anonymity statement as given.
        public init(
            requestedK: Int, achievedK: Int?, quasiIdentifiers: [String], classes: Int, generalized: [String: String],
            suppressedValues: [String: Int], suppressedParticipants: Int, sensitive: [String]?
        ) {
            self.requestedK = requestedK
            self.achievedK = achievedK
            self.quasiIdentifiers = quasiIdentifiers
            self.classes = classes
            self.generalized = generalized
            self.suppressedValues = suppressedValues
            self.suppressedParticipants = suppressedParticipants
            self.sensitive = sensitive
        }

        enum CodingKeys: String, CodingKey {
            case classes, generalized, sensitive
            case requestedK = "requested_k"
            case achievedK = "achieved_k"
            case quasiIdentifiers = "quasi_identifiers"
            case suppressedValues = "suppressed_values"
            case suppressedParticipants = "suppressed_participants"
            case recordQuasiIdentifiers = "record_quasi_identifiers"
            case recordAchievedK = "record_achieved_k"
            case recordAttributesEnforced = "record_attributes_enforced"
        }
    }

    /// A reviewed exception the residual-PII scan applied: which value (by hash) of which table
    /// and column was published although it matched a roster identifier, who approved it and why.
    public struct ReviewedException: Sendable, Hashable, Codable {
        /// Table (file name without extension, `Bundle` for FHIR bundles).
        public var table: String
        /// CSV column or JSON key path.
        public var column: String
        /// Lowercase hex SHA-256 of the exact value (never the value).
        public var valueSHA256: String
        /// Who approved it.
        public var reviewer: String
        /// Why.
        public var reason: String
        /// How many findings of this export it covered.
        public var findings: Int

        /// An exception as given.
        public init(table: String, column: String, valueSHA256: String, reviewer: String, reason: String, findings: Int) {
            self.table = table
            self.column = column
            self.valueSHA256 = valueSHA256
            self.reviewer = reviewer
            self.reason = reason
            self.findings = findings
        }

        enum CodingKeys: String, CodingKey {
            case table, column, reviewer, reason, findings
            case valueSHA256 = "value_sha256"
        }
    }

    /// The consent facts an auditor recomputes the export's consent from (`cohort verify`'s
    /// consent check): who the export is for, which audiences each sharing scope allows, which
    /// versions the protocol accepts and what each covers, and how many records consent left out.
    public struct ConsentBasis: Sendable, Hashable, Codable {
        /// One consent version of the protocol.
        public struct Version: Sendable, Hashable, Codable {
            /// The version (`1.1`).
            public var version: String
            /// Whether the protocol accepts it (a participant whose consent in force is of a
            /// version not accepted is left out, and so are records it governs).
            public var accepted: Bool
            /// The data types it covers (`symptom_log`, `biometric`…), resolved: every collected type when the protocol does not narrow it.
            public var covers: [String]
            /// Whether a re-consent to it also governs data recorded before its signing.
            public var retroactive: Bool

            /// A version as given.
            public init(version: String, accepted: Bool, covers: [String], retroactive: Bool) {
                self.version = version
                self.accepted = accepted
                self.covers = covers
                self.retroactive = retroactive
            }
        }

        /// `study-team` or `external`.
        public var audience: String
        /// Sharing scope → the audiences it allows.
        public var scopes: [String: [String]]
        /// Every consent version the protocol lists.
        public var versions: [Version]
        /// Records left out because consent did not cover them, by reason (`biometric: data type not covered by consent`).
        public var recordsLeftOut: [Exclusion]

        /// Consent facts as given.
        public init(audience: String, scopes: [String: [String]], versions: [Version], recordsLeftOut: [Exclusion]) {
            self.audience = audience
            self.scopes = scopes
            self.versions = versions
            self.recordsLeftOut = recordsLeftOut
        }

        enum CodingKeys: String, CodingKey {
            case audience, scopes, versions
            case recordsLeftOut = "records_left_out"
        }
    }

    /// `cohort/export-manifest@1`.
    public var format: String
    /// The study.
    public var study: Study
    /// Protocol revision and hash.
    public var protocolReference: ProtocolReference
    /// Lowercase hex SHA-256 of the de-identification policy applied.
    public var policySHA256: String
    /// The recipient id the export was made for.
    public var recipient: String
    /// The cohort version that made the export.
    public var toolVersion: String
    /// When the export was made.
    public var createdAt: Timestamp
    /// The archive.
    public var archive: Archive
    /// Every file in the bag (payload and tag files), sorted by bag-relative path.
    public var files: [BagFile]
    /// Who or what was left out, as counts.
    public var exclusions: [Exclusion]
    /// The signing key.
    public var signer: Signer
    /// The audit-chain checkpoint at export time, signed by the study key.
    public var auditCheckpoint: AuditCheckpoint
    /// k-anonymity achieved; absent when the protocol asks for none (and in manifests written
    /// before this field existed, which still decode).
    public var kAnonymity: KAnonymity?
    /// The reviewed exceptions the residual-PII scan applied (`cohort export --allow`); absent
    /// (nil) when none was used, so manifests written before this field decode unchanged.
    public var residualExceptions: [ReviewedException]?
    /// The one site the export is limited to (`cohort export --site`): only that site's
    /// participants are in it. Absent for a study-wide export (and in manifests written before
    /// this field existed, which still decode).
    public var site: String?
    /// The consent facts the export was made under (absent in manifests written before consent
    /// governed exports; `cohort verify`'s consent check fails without them).
    public var consent: ConsentBasis?
    /// The encrypted file the archive was delivered as (`cohort export --encrypt-to`); absent for
    /// a plaintext export (and in manifests written before this field existed).
    public var encrypted: Encrypted?
    /// What the residual-PII scan checked before the export was published, with counts per rule
    /// family (absent in manifests written before it, which still decode and verify).
    public var residualScan: ResidualScan?

    /// What the residual-PII scan checked: the files and values, and per rule family the values
    /// it checked and what it found (findings the reviewed exceptions covered count here).
    public struct ResidualScan: Sendable, Hashable, Codable {
        /// One rule family (`roster forms`, `unknown tokens`).
        public struct Rule: Sendable, Hashable, Codable {
            public var rule: String
            public var scope: String
            public var valuesChecked: Int
            public var findings: Int
            public init(rule: String, scope: String, valuesChecked: Int, findings: Int) {
                self.rule = rule
                self.scope = scope
                self.valuesChecked = valuesChecked
                self.findings = findings
            }
            enum CodingKeys: String, CodingKey {
                case rule, scope, findings
                case valuesChecked = "values_checked"
            }
        }
        public var filesScanned: Int
        public var valuesScanned: Int
        public var freeTextValues: Int
        public var rules: [Rule]
        public init(filesScanned: Int, valuesScanned: Int, freeTextValues: Int, rules: [Rule]) {
            self.filesScanned = filesScanned
            self.valuesScanned = valuesScanned
            self.freeTextValues = freeTextValues
            self.rules = rules
        }
        enum CodingKeys: String, CodingKey {
            case rules
            case filesScanned = "files_scanned"
            case valuesScanned = "values_scanned"
            case freeTextValues = "free_text_values"
        }
    }

    /// A manifest as given; `format` is ``currentFormat``.
    public init(
        study: Study, protocolReference: ProtocolReference, policySHA256: String, recipient: String, toolVersion: String,
        createdAt: Timestamp, archive: Archive, files: [BagFile], exclusions: [Exclusion], signer: Signer,
        auditCheckpoint: AuditCheckpoint, kAnonymity: KAnonymity? = nil
    ) {
        self.format = Self.currentFormat
        self.study = study
        self.protocolReference = protocolReference
        self.policySHA256 = policySHA256
        self.recipient = recipient
        self.toolVersion = toolVersion
        self.createdAt = createdAt
        self.archive = archive
        self.files = files
        self.exclusions = exclusions
        self.signer = signer
        self.auditCheckpoint = auditCheckpoint
        self.kAnonymity = kAnonymity
    }

    /// This manifest with `exceptions` recorded (none: the field stays absent).
    public func withResidualExceptions(_ exceptions: [ReviewedException]) -> ExportManifest {
        var copy = self
        copy.residualExceptions = exceptions.isEmpty ? nil : exceptions
        return copy
    }

    /// The exact manifest file bytes: canonical pretty JSON and a final newline.
    public func encoded() throws -> [UInt8] {
        Array(try CanonicalJSON.pretty(self)) + [UInt8(ascii: "\n")]
    }

    enum CodingKeys: String, CodingKey {
        case format, study, recipient, archive, files, exclusions, signer, site, consent
        case protocolReference = "protocol"
        case policySHA256 = "policy_sha256"
        case toolVersion = "tool_version"
        case createdAt = "created_at"
        case auditCheckpoint = "audit_checkpoint"
        case kAnonymity = "k_anonymity"
        case residualExceptions = "residual_exceptions"
        case encrypted
        case residualScan = "residual_scan"
    }
}
