import CohortCompliance
import CohortCore
import CohortImport
import CohortStore
import Foundation

/// The import validator's view of the workspace: the store's participants, read once, and the
/// compliance module's consent and withdrawal gates. The validator names a row's participant by
/// position in ``enrolledParticipants``; ``handles`` turns that into the store's handle, so row
/// keys stay inside the store and the validator knows nothing of it.
struct StoreSubjects: RecordSubjects {
    let enrolledParticipants: [Participant]
    /// The store's handle of each participant, in ``enrolledParticipants`` order.
    let handles: [ParticipantHandle]
    let store: any StudyStore

    init(workspace: Workspace) throws {
        let stored = try workspace.store.participants()
        enrolledParticipants = stored.map(\.participant)
        handles = stored.map(\.handle)
        store = workspace.store
    }

    /// Each participant's consent and withdrawal gate, by internal id (absent when their zone is
    /// unknown to the consent rules).
    func admissions(studyProtocol: StudyProtocol) throws -> [UUID: any RecordAdmission] {
        let rules = ConsentRules(studyProtocol: studyProtocol)
        let histories = try store.consentHistories()
        var admissions: [UUID: any RecordAdmission] = [:]
        for p in enrolledParticipants {
            if let gate = try? rules.importGate(for: ComplianceSubject(p), history: histories[p.id] ?? []) {
                admissions[p.id] = ConsentGateAdmission(gate: gate)
            }
        }
        return admissions
    }
}

/// A compliance ``ImportGate`` as the validator's admission rule.
struct ConsentGateAdmission: RecordAdmission {
    let gate: ImportGate

    func refusal(at start: Timestamp) -> CohortError? {
        switch gate.check(start) {
        case .allowed: nil
        case let .refused(reason): reason.error()
        }
    }
}
