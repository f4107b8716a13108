import CohortCore

extension Enrollment {
    /// The details of this enrollment's `participant.enroll` audit event, the same in every
    /// store: how it was enrolled (`source`) and, in a multi-site study, the site (an
    /// organisational label, not personal data).
    package func auditDetails(source: String) -> [String: String] {
        var details = ["source": source]
        if let site = participant.site { details["site"] = site }
        return details
    }
}
