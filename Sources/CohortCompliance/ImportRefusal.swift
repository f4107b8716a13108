package import CohortCore

/// Why data for a participant and instant may not be imported.
///
/// Messages and hints say what to do and never contain an identifier or record value; the
/// importer adds the location (file:line:field).
package enum ImportRefusal: String, Sendable, Hashable, Codable, CaseIterable {
    /// No consent is in force.
    case noConsent = "no_consent"
    /// The consent in force is of a version the protocol's re-consent policy no longer accepts.
    case reconsentDue = "reconsent_due"
    /// The participant withdrew (stop or exclude) at or before this instant, or withdrew at an unknown time.
    case withdrawn
    /// The participant's data was erased; nothing is accepted any more.
    case erased
    /// The instant is before the participant's enrollment day (in their time zone).
    case beforeEnrollment = "before_enrollment"
    /// The instant is after the participant's last study day (in their time zone).
    case afterStudyEnd = "after_study_end"

    /// One sentence saying what is wrong.
    public var message: String {
        switch self {
        case .noConsent: "data cannot be imported: the participant has no consent in force"
        case .reconsentDue: "data cannot be imported: the participant must re-consent to the current consent version"
        case .withdrawn: "data cannot be imported: the participant withdrew from the study before this time"
        case .erased: "data cannot be imported: the participant withdrew and their data was erased"
        case .beforeEnrollment: "data cannot be imported: the time is before the participant's enrollment day"
        case .afterStudyEnd: "data cannot be imported: the time is after the participant's last study day"
        }
    }

    /// What to do about it.
    public var hint: String {
        switch self {
        case .noConsent: "record the participant's signed consent first, then import again"
        case .reconsentDue: "have the participant sign the current consent version and record it, then import again"
        case .withdrawn, .erased: "remove this participant's rows from the file; data after a withdrawal is never accepted"
        case .beforeEnrollment, .afterStudyEnd:
            "check the time and its UTC offset; only data from the enrollment day to the last study day is accepted"
        }
    }

    /// The error category: `policy` for consent and withdrawal, `invalidInput` for times outside the study.
    package var errorCode: CohortError.Code {
        switch self {
        case .beforeEnrollment, .afterStudyEnd: .invalidInput
        default: .policy
        }
    }

    /// The refusal as an error, at `location` in the input.
    public func error(at location: CohortError.Location? = nil) -> CohortError {
        CohortError(errorCode, message, at: location, hint: hint)
    }
}

/// Whether data may be imported for a participant at an instant.
package enum ImportEligibility: Sendable, Hashable {
    /// The data may be imported.
    case allowed
    /// The data must be rejected, for this reason.
    case refused(ImportRefusal)

    /// Whether the data may be imported.
    package var isAllowed: Bool { self == .allowed }

    /// The refusal, if any.
    package var refusal: ImportRefusal? {
        if case .refused(let reason) = self { return reason }
        return nil
    }
}
