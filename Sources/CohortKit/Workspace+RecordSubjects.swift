import CohortCompliance
public import CohortCore
public import CohortImport
public import Foundation
import CohortStore

/// The import validator looks participants up in the workspace's store and admits data through
/// the compliance module's consent and withdrawal gates.
extension Workspace: RecordSubjects {
    /// Every enrolled participant with their store key.
    public func enrolledParticipants() throws -> [(pk: Int64, participant: Participant)] {
        try store.participants().map { ($0.pk, $0.participant) }
    }

    /// Each participant's consent and withdrawal gate, by internal id (absent when their zone is
    /// unknown to the consent rules).
    public func admissions(studyProtocol: StudyProtocol) throws -> [UUID: any RecordAdmission] {
        let rules = ConsentRules(studyProtocol: studyProtocol)
        let histories = try store.consentHistories()
        var admissions: [UUID: any RecordAdmission] = [:]
        for stored in try store.participants() {
            let p = stored.participant
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
