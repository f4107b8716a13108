/// A study protocol (`cohort/protocol@1`): what a study collects, for how long, under which
/// consent, how compliance is judged and how exports are de-identified.
public struct StudyProtocol: Sendable, Hashable, Codable {
    /// The schema identifier every protocol file names.
    package static let schemaID = "cohort/protocol@1"

    public var schema: String = StudyProtocol.schemaID
    /// Short identifier: lower-case letters, digits and `-` (`axspa-wearables`).
    public var id: String
    /// Increases with every approved amendment.
    public var revision: Int
    public var title: String
    public var institution: String
    public var principalInvestigator: Investigator
    public var irb: IRB
    /// Days from enrollment to the end of a participant's participation.
    public var durationDays: Int
    public var consent: ConsentPolicy
    /// The data the study collects: each family with the kinds in it.
    public var dataTypes: [DataType: [RecordKind]]
    public var compliance: CompliancePolicy
    public var deidentification: DeidentificationPolicy
    public var export: ExportSettings
    /// How records from outside systems (FHIR) map to this study; empty when not given.
    public var importSettings = ImportSettings()
    /// RxNorm concept ids (RXCUI) of the medications the study names, by the name participants'
    /// records use (lower-cased): the FHIR export codes a MedicationStatement whose name matches.
    public var medicationCodes: [String: String] = [:]
    /// Which source counts when two overlap in a cumulative kind's daily total (`source_priority`,
    /// highest first; unlisted sources rank watch, phone, other). See ``DailyTotals``.
    public var sourcePriority = SourcePriority()

    package init(
        id: String, revision: Int, title: String, institution: String, principalInvestigator: Investigator, irb: IRB,
        durationDays: Int, consent: ConsentPolicy, dataTypes: [DataType: [RecordKind]], compliance: CompliancePolicy,
        deidentification: DeidentificationPolicy, export: ExportSettings
    ) {
        self.id = id
        self.revision = revision
        self.title = title
        self.institution = institution
        self.principalInvestigator = principalInvestigator
        self.irb = irb
        self.durationDays = durationDays
        self.consent = consent
        self.dataTypes = dataTypes
        self.compliance = compliance
        self.deidentification = deidentification
        self.export = export
    }

    /// Every record kind the protocol collects.
    public var collectedKinds: Set<RecordKind> { Set(dataTypes.values.flatMap { $0 }) }

    /// Whether the protocol collects `kind`.
    package func collects(_ kind: RecordKind) -> Bool { dataTypes[kind.dataType]?.contains(kind) ?? false }

    public struct Investigator: Sendable, Hashable, Codable {
        public var name: String
        public var email: String?
        package init(name: String, email: String? = nil) {
            self.name = name
            self.email = email
        }
    }

    public struct IRB: Sendable, Hashable, Codable {
        package var board: String
        package var approvalNumber: String
        package var expires: CivilDate
        package init(board: String, approvalNumber: String, expires: CivilDate) {
            self.board = board
            self.approvalNumber = approvalNumber
            self.expires = expires
        }
        enum CodingKeys: String, CodingKey {
            case board, expires
            case approvalNumber = "approval_number"
        }
    }

    enum CodingKeys: String, CodingKey {
        case schema, id, revision, title, institution, irb, consent, compliance, deidentification, export
        case principalInvestigator = "principal_investigator"
        case durationDays = "duration_days"
        case dataTypes = "data_types"
        case importSettings = "import"
        case medicationCodes = "medication_codes"
        case sourcePriority = "source_priority"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        schema = try c.decode(String.self, forKey: .schema)
        id = try c.decode(String.self, forKey: .id)
        revision = try c.decode(Int.self, forKey: .revision)
        title = try c.decode(String.self, forKey: .title)
        institution = try c.decode(String.self, forKey: .institution)
        principalInvestigator = try c.decode(Investigator.self, forKey: .principalInvestigator)
        irb = try c.decode(IRB.self, forKey: .irb)
        durationDays = try c.decode(Int.self, forKey: .durationDays)
        consent = try c.decode(ConsentPolicy.self, forKey: .consent)
        let raw = try c.decode([String: [RecordKind]].self, forKey: .dataTypes)
        var types: [DataType: [RecordKind]] = [:]
        for (key, kinds) in raw {
            guard let type = DataType(rawValue: key) else {
                throw DecodingError.dataCorruptedError(forKey: .dataTypes, in: c, debugDescription: "unknown data type")
            }
            types[type] = kinds
        }
        dataTypes = types
        compliance = try c.decode(CompliancePolicy.self, forKey: .compliance)
        deidentification = try c.decode(DeidentificationPolicy.self, forKey: .deidentification)
        export = try c.decode(ExportSettings.self, forKey: .export)
        importSettings = try c.decodeIfPresent(ImportSettings.self, forKey: .importSettings) ?? ImportSettings()
        medicationCodes = try c.decodeIfPresent([String: String].self, forKey: .medicationCodes) ?? [:]
        sourcePriority = SourcePriority(try c.decodeIfPresent([String].self, forKey: .sourcePriority) ?? [])
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(schema, forKey: .schema)
        try c.encode(id, forKey: .id)
        try c.encode(revision, forKey: .revision)
        try c.encode(title, forKey: .title)
        try c.encode(institution, forKey: .institution)
        try c.encode(principalInvestigator, forKey: .principalInvestigator)
        try c.encode(irb, forKey: .irb)
        try c.encode(durationDays, forKey: .durationDays)
        try c.encode(consent, forKey: .consent)
        var raw: [String: [RecordKind]] = [:]
        for (type, kinds) in dataTypes { raw[type.rawValue] = kinds }
        try c.encode(raw, forKey: .dataTypes)
        try c.encode(compliance, forKey: .compliance)
        try c.encode(deidentification, forKey: .deidentification)
        try c.encode(export, forKey: .export)
        if !importSettings.isEmpty { try c.encode(importSettings, forKey: .importSettings) }
        // Left out when empty, so protocols without codes keep their pinned canonical form.
        if !medicationCodes.isEmpty { try c.encode(medicationCodes, forKey: .medicationCodes) }
        if !sourcePriority.order.isEmpty { try c.encode(sourcePriority.order, forKey: .sourcePriority) }
    }
}

/// Consent documents, when a version change makes participants re-consent, and what each
/// version and sharing scope allows an export to publish.
public struct ConsentPolicy: Sendable, Hashable, Codable {
    /// The version new participants sign.
    package var currentVersion: String
    /// Which change between the signed and the current version makes re-consent due.
    package var reconsent: ReconsentPolicy
    /// Every version ever used, with its Mustache template under `templates/`.
    public var documents: [Document]
    /// The audiences each sharing scope allows, beyond (or replacing) the built-in ones
    /// (``SharingScope/builtIn``); empty when the protocol keeps the defaults.
    package var sharingScopes: [SharingScope: Set<ExportAudience>] = [:]

    package init(currentVersion: String, reconsent: ReconsentPolicy, documents: [Document]) {
        self.currentVersion = currentVersion
        self.reconsent = reconsent
        self.documents = documents
    }

    public struct Document: Sendable, Hashable, Codable {
        public var version: String
        /// Path of the Mustache template, relative to the project (`templates/consent/…`).
        package var template: String
        /// The data types this version covers; nil: every type the protocol collects.
        package var covers: [DataType]?
        /// Whether the protocol still accepts this version: participants whose consent in force
        /// is of a version no longer accepted are left out of exports, and records governed by it too.
        package var accepted = true
        /// Whether a re-consent to this version also governs data recorded before its signing
        /// (by default a newer version governs data from its signing onward).
        package var retroactive = false

        package init(version: String, template: String, covers: [DataType]? = nil, accepted: Bool = true, retroactive: Bool = false) {
            self.version = version
            self.template = template
            self.covers = covers
            self.accepted = accepted
            self.retroactive = retroactive
        }

        /// Whether this version covers records of `type`.
        package func covers(_ type: DataType) -> Bool { covers.map { $0.contains(type) } ?? true }

        enum CodingKeys: String, CodingKey {
            case version, template, covers, accepted, retroactive
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            version = try c.decode(String.self, forKey: .version)
            template = try c.decode(String.self, forKey: .template)
            covers = try c.decodeIfPresent([DataType].self, forKey: .covers)
            accepted = try c.decodeIfPresent(Bool.self, forKey: .accepted) ?? true
            retroactive = try c.decodeIfPresent(Bool.self, forKey: .retroactive) ?? false
        }

        // Defaults are left out, so protocols written before these keys keep their pinned form.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(version, forKey: .version)
            try c.encode(template, forKey: .template)
            if let covers { try c.encode(covers, forKey: .covers) }
            if !accepted { try c.encode(accepted, forKey: .accepted) }
            if retroactive { try c.encode(retroactive, forKey: .retroactive) }
        }
    }

    /// The document for `version`, if the protocol names it.
    public func document(version: String) -> Document? { documents.first { $0.version == version } }

    /// Whether the protocol lists `version` and still accepts it.
    public func accepts(version: String) -> Bool { document(version: version)?.accepted ?? false }

    /// The audiences `scope` allows: the protocol's entry, else the built-in one; nil for a scope
    /// the protocol does not define.
    package func audiences(for scope: SharingScope) -> Set<ExportAudience>? { sharingScopes[scope] ?? SharingScope.builtIn[scope] }

    /// Every scope the protocol defines with its audiences (built-in ones included), by name.
    package var allSharingScopes: [SharingScope: Set<ExportAudience>] { SharingScope.builtIn.merging(sharingScopes) { $1 } }

    enum CodingKeys: String, CodingKey {
        case reconsent, documents
        case currentVersion = "current_version"
        case sharingScopes = "sharing_scopes"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        currentVersion = try c.decode(String.self, forKey: .currentVersion)
        reconsent = try c.decode(ReconsentPolicy.self, forKey: .reconsent)
        documents = try c.decode([Document].self, forKey: .documents)
        let raw = try c.decodeIfPresent([String: [ExportAudience]].self, forKey: .sharingScopes) ?? [:]
        for (name, audiences) in raw {
            guard let scope = SharingScope(rawValue: name) else {
                throw DecodingError.dataCorruptedError(forKey: .sharingScopes, in: c, debugDescription: "not a sharing scope name")
            }
            sharingScopes[scope] = Set(audiences)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(currentVersion, forKey: .currentVersion)
        try c.encode(reconsent, forKey: .reconsent)
        try c.encode(documents, forKey: .documents)
        // Left out when empty, so protocols without scopes keep their pinned canonical form.
        if !sharingScopes.isEmpty {
            var raw: [String: [ExportAudience]] = [:]
            for (scope, audiences) in sharingScopes { raw[scope.rawValue] = audiences.sorted() }
            try c.encode(raw, forKey: .sharingScopes)
        }
    }
}

/// Which consent version change requires participants to consent again.
package enum ReconsentPolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Any change of the major number (1.x → 2.0).
    case major
    /// Any change of major or minor (1.1 → 1.2).
    case minor
    /// Any change at all.
    case any
    /// Never: earlier versions stay valid.
    case none

    /// Whether a participant who signed `signed` must re-consent when `current` is in force.
    package func requiresReconsent(signed: String, current: String) -> Bool {
        guard signed != current else { return false }
        let a = signed.split(separator: ".").map { Int($0) ?? 0 }
        let b = current.split(separator: ".").map { Int($0) ?? 0 }
        func part(_ p: [Int], _ i: Int) -> Int { i < p.count ? p[i] : 0 }
        switch self {
        case .none: return false
        case .any: return true
        case .major: return part(a, 0) != part(b, 0)
        case .minor: return part(a, 0) != part(b, 0) || part(a, 1) != part(b, 1)
        }
    }
}

/// How compliance is judged, and the reminder sent to those below it.
public struct CompliancePolicy: Sendable, Hashable, Codable {
    package var rules: [ComplianceRule]
    /// Mustache template for reminder messages.
    package var reminderTemplate: String?

    package init(rules: [ComplianceRule], reminderTemplate: String? = nil) {
        self.rules = rules
        self.reminderTemplate = reminderTemplate
    }

    enum CodingKeys: String, CodingKey {
        case rules
        case reminderTemplate = "reminder_template"
    }
}

/// One compliance rule: "at least `minPerDay` records of these kinds per participant-day".
package struct ComplianceRule: Sendable, Hashable, Codable {
    public var id: String
    public var description: String
    /// The family whose records count (all its collected kinds), or nil when `kinds` is given.
    package var dataType: DataType?
    /// Specific kinds whose records count.
    public var kinds: [RecordKind]
    package var minPerDay: Int
    /// A rate at or above which a participant is compliant (0…1).
    public var threshold: Double
    /// For a rule over one cumulative kind (``DailyTotals/cumulativeKinds``): a day meets the
    /// rule when the kind's overlap-free daily total (``DailyTotals``) reaches this, in the kind's
    /// canonical unit (`{steps}` for steps); nil = the day needs ``minPerDay`` records.
    package var minTotal: Double?

    package init(id: String, description: String, dataType: DataType?, kinds: [RecordKind], minPerDay: Int, threshold: Double, minTotal: Double? = nil) {
        self.id = id
        self.description = description
        self.dataType = dataType
        self.kinds = kinds
        self.minPerDay = minPerDay
        self.threshold = threshold
        self.minTotal = minTotal
    }

    /// The kinds whose records count towards the rule under `studyProtocol`.
    package func countedKinds(in studyProtocol: StudyProtocol) -> Set<RecordKind> {
        var result = Set(kinds)
        if let dataType { result.formUnion(studyProtocol.dataTypes[dataType] ?? dataType.kinds) }
        return result
    }

    enum CodingKeys: String, CodingKey {
        case id, description, kinds, threshold
        case dataType = "data_type"
        case minPerDay = "min_per_day"
        case minTotal = "min_total"
    }
}

/// Export formats a protocol allows.
public enum ExportFormat: String, Sendable, Hashable, Codable, CaseIterable {
    case csv
    case json
    case fhir
}

/// Export settings of a protocol.
public struct ExportSettings: Sendable, Hashable, Codable {
    public var formats: [ExportFormat]
    package init(formats: [ExportFormat]) { self.formats = formats }
}
