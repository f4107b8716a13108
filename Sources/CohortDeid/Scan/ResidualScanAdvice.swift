package import CohortCore

/// What a coordinator should change when the residual-PII scan finds an identifier: which
/// policy rule published the field, and the rule to use instead — never the value.
package enum ResidualScanAdvice {
    /// The policy field (`symptom_log.note`) a finding's table and field come from, or nil when
    /// the field does not come from a policy rule (a fixed FHIR element).
    package static func policyField(of finding: ResidualFinding) -> (table: String, field: String)? {
        let table: String?
        switch finding.table {
        case "participants": table = "participant"
        case "consents": table = "consent"
        case "Observation", "MedicationStatement", "MedicationAdministration", "Bundle": table = "records"
        case "Patient": table = "participant"
        case "Consent": table = "consent"
        default: table = DataType.allCases.first { $0.tableName == finding.table }?.rawValue
        }
        guard let table, var field = finding.field else { return nil }
        if field.hasPrefix("entry.resource.") { field.removeFirst("entry.resource.".count) }
        // FHIR elements that carry record fields.
        let recordField: String
        switch field {
        case "note.text": recordField = "note"
        case "device.display": recordField = "source"
        case "valueString", "medicationCodeableConcept.text", "valueCodeableConcept.text": recordField = "text"
        default: recordField = field.split(separator: ".").last.map(String.init) ?? field
        }
        return (table, recordField)
    }

    /// One sentence: `symptom_log.note is keep: use scrub or drop` (or the records-wide rule
    /// that applies), naming the finding's place first.
    package static func advice(for finding: ResidualFinding, policy: DeidentificationPolicy) -> String {
        let place = finding.description
        guard let (table, field) = policyField(of: finding) else {
            return "\(place) — this value is not set by a policy rule; list it in a reviewed exception (--allow) if it may be published"
        }
        var ruleName = "\(table).\(field)"
        var rule = policy.fields[ruleName]
        if rule == nil, table != "records", table != "participant", table != "consent" {
            ruleName = "records.\(field)"
            rule = policy.fields[ruleName]
        }
        guard let rule else {
            return "\(place) — no rule publishes \(table).\(field); check the policy, or list the value in a reviewed exception (--allow)"
        }
        let allowed = DeidentificationPolicy.allowedTransforms(table: table == "records" ? "symptom_log" : table, field: field)
        let better = [Transform.scrub, .drop].filter { $0 != rule.transform && allowed.contains($0) }.map(\.rawValue)
        let instead = better.isEmpty ? "drop it" : "use " + better.joined(separator: " or ")
        if rule.transform == .scrub {
            return "\(place) — \(ruleName) is scrub and still carries a participant identifier: \(instead), or list the value in a reviewed exception (--allow)"
        }
        return "\(place) — \(ruleName) is \(rule.transform.rawValue): \(instead)"
    }
}
