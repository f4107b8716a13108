package import CohortCore

/// Code (system + code) → record kind, for FHIR import: by default the codes cohort's own FHIR
/// export writes for every kind (LOINC, or cohort's local code system), plus LOINC 41950-7 for
/// steps; then the protocol's `import.code_map`, whose entries add codes or override defaults.
package struct FHIRCodeMap: Sendable {
    private var map: [String: RecordKind]

    /// The defaults plus `settings.codeMap`.
    package init(settings: ImportSettings) {
        var map: [String: RecordKind] = [:]
        for kind in RecordKind.allCases { map[Self.key(kind.coding.system, kind.coding.code)] = kind }
        map[Self.key(Coding.loincSystem, "41950-7")] = .steps
        for entry in settings.codeMap { map[Self.key(entry.system, entry.code)] = entry.kind }
        self.map = map
    }

    /// The kind of the first coding in `codings` the map knows.
    public func kind(in codings: [(system: String, code: String)]) -> RecordKind? {
        for c in codings { if let kind = map[Self.key(c.system, c.code)] { return kind } }
        return nil
    }

    static func key(_ system: String, _ code: String) -> String { system + "|" + code }
}
