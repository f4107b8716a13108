import Yams

/// How the protocol reads records from outside systems (the `import:` section, optional).
public struct ImportSettings: Sendable, Hashable, Codable {
    /// The FHIR identifier system whose value is the participant's MRN in the roster
    /// (`Patient.identifier.system`, e.g. `http://hospital.example.org/mrn`); nil when FHIR
    /// patients are matched only through a user map or an export's pseudonyms.
    public var patientIdentifierSystem: String?
    /// Codes (LOINC, SNOMED CT, …) that map to a record kind, in addition to (or instead of) the
    /// codes cohort's own exports use for each kind.
    public var codeMap: [CodeMapping]

    public init(patientIdentifierSystem: String? = nil, codeMap: [CodeMapping] = []) {
        self.patientIdentifierSystem = patientIdentifierSystem
        self.codeMap = codeMap
    }

    /// Whether nothing is set (the section is then left out when the protocol is written).
    public var isEmpty: Bool { patientIdentifierSystem == nil && codeMap.isEmpty }

    /// One code → kind rule.
    public struct CodeMapping: Sendable, Hashable, Codable {
        /// The code system URI (`http://loinc.org`, `http://snomed.info/sct`).
        public var system: String
        public var code: String
        public var kind: RecordKind

        public init(system: String, code: String, kind: RecordKind) {
            self.system = system
            self.code = code
            self.kind = kind
        }
    }

    enum CodingKeys: String, CodingKey {
        case patientIdentifierSystem = "patient_identifier_system"
        case codeMap = "code_map"
    }
}

extension NodeReader {
    func readImport(_ node: Node?, dataTypes: [DataType: [RecordKind]]?) -> ImportSettings {
        guard let node else { return ImportSettings() }
        guard let m = mapping(node, "import", keys: ["patient_identifier_system", "code_map"], required: []) else { return ImportSettings() }
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
        return ImportSettings(patientIdentifierSystem: system, codeMap: codeMap)
    }
}
