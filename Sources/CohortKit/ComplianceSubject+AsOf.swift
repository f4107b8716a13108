import CohortCompliance
import CohortCore
import Foundation

extension ComplianceSubject {
    /// The subject as it stood at `instant`: a withdrawal recorded after it had not happened yet,
    /// so a report `--as-of` an earlier day shows the participant active and ongoing then.
    func asOf(_ instant: Date) -> ComplianceSubject {
        guard let withdrawnAt, withdrawnAt.date > instant, status != .erased else { return self }
        var subject = self
        subject.withdrawnAt = nil
        subject.status = .active
        return subject
    }
}
