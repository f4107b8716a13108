package import CohortCore
package import Foundation

/// Where ``RecordValidator`` looks up who may have data: the enrolled participants and, for
/// each, whether consent and withdrawal admit data at an instant. CohortKit's `Workspace`
/// answers from the store and the compliance module's consent rules; tests answer from a list.
package protocol RecordSubjects {
    /// Every enrolled participant. ``RecordValidator/validate(_:line:)`` names a row's participant
    /// by their position in this list, so the directory maps it back to its own key without
    /// the validator knowing the store.
    var enrolledParticipants: [Participant] { get }

    /// Each participant's admission rule by internal id; a participant without one (an unknown
    /// time zone) has every row refused.
    func admissions(studyProtocol: StudyProtocol) throws -> [UUID: any RecordAdmission]
}

/// Whether consent and withdrawal admit a participant's data at an instant.
package protocol RecordAdmission: Sendable {
    /// Why data starting at `start` is refused (a message without the participant's code), or
    /// nil when it is admitted.
    func refusal(at start: Timestamp) -> CohortError?
}
