extension StudyProtocol {
    /// The fields an auditor's consent check recomputes from (`cohort verify`: every published
    /// participant has a consent in force that allows the export's audience and covers each
    /// published record), with the transform each must have. Times are needed only when a
    /// participant can hold more than one consent (the protocol lists more than one version).
    public var consentAuditFields: [(field: String, transform: Transform)] {
        var fields: [(String, Transform)] = [
            ("consent.version", .keep), ("consent.sharing", .keep), ("consent.status", .keep), ("participant.status", .keep),
        ]
        if consent.documents.count > 1 { fields.append(("consent.signed_at", .shift)) }
        return fields
    }

    /// The consent-audit fields the de-identification policy does not publish as required, as
    /// (field, required transform): an export under such a policy could not be checked for consent
    /// from the package alone, so the protocol is refused.
    public var consentAuditGaps: [(field: String, transform: Transform)] {
        consentAuditFields.filter { item in
            let parts = item.field.split(separator: ".").map(String.init)
            return deidentification.rule(table: parts[0], field: parts[1])?.transform != item.transform
        }
    }
}
