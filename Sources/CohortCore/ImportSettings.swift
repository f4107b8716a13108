import Yams

/// How the protocol reads records from outside systems (the `import:` section, optional).
public struct ImportSettings: Sendable, Hashable, Codable {
    /// The FHIR identifier system whose value is the participant's MRN in the roster
    /// (`Patient.identifier.system`, e.g. `http://hospital.example.org/mrn`); nil when FHIR
    /// patients are matched only through a user map or an export's pseudonyms.
    package var patientIdentifierSystem: String?
    /// Codes (LOINC, SNOMED CT, …) that map to a record kind, in addition to (or instead of) the
    /// codes cohort's own exports use for each kind.
    package var codeMap: [CodeMapping]
    /// The Health app `MetadataEntry` keys whose values Apple Health imports keep
    /// (`import.apple_health.keep_metadata`), each one of ``HealthKitMetadata/keepable``; every
    /// other metadata value is dropped. Kept values go into the record's note as
    /// `key=value` entries separated by `; `.
    package var appleHealthKeepMetadata: [String]

    package init(patientIdentifierSystem: String? = nil, codeMap: [CodeMapping] = [], appleHealthKeepMetadata: [String] = []) {
        self.patientIdentifierSystem = patientIdentifierSystem
        self.codeMap = codeMap
        self.appleHealthKeepMetadata = appleHealthKeepMetadata
    }

    /// Whether nothing is set (the section is then left out when the protocol is written).
    public var isEmpty: Bool { patientIdentifierSystem == nil && codeMap.isEmpty && appleHealthKeepMetadata.isEmpty }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        patientIdentifierSystem = try c.decodeIfPresent(String.self, forKey: .patientIdentifierSystem)
        codeMap = try c.decodeIfPresent([CodeMapping].self, forKey: .codeMap) ?? []
        // Protocols pinned before the rule existed have no such key.
        if c.contains(.appleHealth) {
            let apple = try c.nestedContainer(keyedBy: AppleHealthKeys.self, forKey: .appleHealth)
            appleHealthKeepMetadata = try apple.decodeIfPresent([String].self, forKey: .keepMetadata) ?? []
        } else {
            appleHealthKeepMetadata = []
        }
    }

    /// Written as the protocol file spells it (`apple_health: { keep_metadata: […] }`), so a
    /// written protocol loads again.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(patientIdentifierSystem, forKey: .patientIdentifierSystem)
        try c.encode(codeMap, forKey: .codeMap)
        if !appleHealthKeepMetadata.isEmpty {
            var apple = c.nestedContainer(keyedBy: AppleHealthKeys.self, forKey: .appleHealth)
            try apple.encode(appleHealthKeepMetadata, forKey: .keepMetadata)
        }
    }

    /// One code → kind rule.
    package struct CodeMapping: Sendable, Hashable, Codable {
        /// The code system URI (`http://loinc.org`, `http://snomed.info/sct`).
        public var system: String
        public var code: String
        public var kind: RecordKind

        package init(system: String, code: String, kind: RecordKind) {
            self.system = system
            self.code = code
            self.kind = kind
        }
    }

    enum CodingKeys: String, CodingKey {
        case patientIdentifierSystem = "patient_identifier_system"
        case codeMap = "code_map"
        case appleHealth = "apple_health"
    }

    enum AppleHealthKeys: String, CodingKey {
        case keepMetadata = "keep_metadata"
    }
}

extension NodeReader {
    func readImport(_ node: Node?, dataTypes: [DataType: [RecordKind]]?) -> ImportSettings {
        guard let node else { return ImportSettings() }
        guard let m = mapping(node, "import", keys: ["patient_identifier_system", "code_map", "apple_health"], required: []) else { return ImportSettings() }
        let system = m["patient_identifier_system"].flatMap { string($0, "import.patient_identifier_system") }
        var codeMap: [ImportSettings.CodeMapping] = []
        for (i, item) in (m["code_map"].flatMap { sequence($0, "import.code_map") } ?? []).enumerated() {
            let path = "import.code_map[\(i)]"
            guard let entry = mapping(item, path, keys: ["system", "code", "kind"], required: ["system", "code", "kind"]) else { continue }
            guard let system = string(entry["system"], "\(path).system"), let code = string(entry["code"], "\(path).code"),
                let kind = enumValue(entry["kind"], "\(path).kind", RecordKind.self)
            else { continue }
            if let dataTypes, !(dataTypes[kind.dataType]?.contains(kind) ?? false) {
                error(entry["kind"], "\(path).kind", "the study does not collect \(kind.rawValue)", hint: "add it to data_types, or remove the mapping")
            }
            if codeMap.contains(where: { $0.system == system && $0.code == code }) {
                error(entry["code"], "\(path).code", "this system and code are mapped twice", hint: "keep one mapping per code")
            }
            codeMap.append(.init(system: system, code: code, kind: kind))
        }
        var keep: [String] = []
        if let node = m["apple_health"], let apple = mapping(node, "import.apple_health", keys: ["keep_metadata"], required: []) {
            for (i, item) in (apple["keep_metadata"].flatMap { sequence($0, "import.apple_health.keep_metadata") } ?? []).enumerated() {
                let path = "import.apple_health.keep_metadata[\(i)]"
                guard let key = string(item, path) else { continue }
                if let refusal = HealthKitMetadata.refusal(key) {
                    // The key is the protocol author's own text, not participant data: naming it is safe.
                    error(item, path, "cannot keep metadata key '\(key)': \(refusal)",
                        hint: "remove it; keys that can be kept: \(HealthKitMetadata.keepable.sorted().joined(separator: ", "))")
                } else if keep.contains(key) {
                    error(item, path, "the key '\(key)' is listed twice", hint: "list each key once")
                } else {
                    keep.append(key)
                }
            }
        }
        return ImportSettings(patientIdentifierSystem: system, codeMap: codeMap, appleHealthKeepMetadata: keep)
    }
}
