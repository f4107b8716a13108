package import CohortCore

/// A participant's import decision, prepared once so that checking each record is a few
/// integer comparisons. Made by `ConsentRules.importGate(for:history:)`.
package struct ImportGate: Sendable, Hashable {
    /// A refusal that holds whatever the instant (no consent, re-consent due, erased…).
    let standingRefusal: ImportRefusal?
    /// First instant of the enrollment day (ms since the epoch, UTC).
    let firstMillisecond: Int64
    /// First instant after the last study day.
    let endMillisecond: Int64
    /// The withdrawal instant (stop/exclude); instants at or after it are refused.
    let withdrawnAtMillisecond: Int64?

    /// Whether a record at `instant` may be imported.
    ///
    /// Order of checks: erased / no consent / re-consent due (whatever the instant), then
    /// withdrawal (instants at or after it), then the study window (enrollment day start to
    /// the end of the last study day, in the participant's zone).
    public func check(_ instant: Timestamp) -> ImportEligibility {
        if let standingRefusal { return .refused(standingRefusal) }
        let ms = instant.epochMilliseconds
        if let withdrawnAtMillisecond, ms >= withdrawnAtMillisecond { return .refused(.withdrawn) }
        if ms < firstMillisecond { return .refused(.beforeEnrollment) }
        if ms >= endMillisecond { return .refused(.afterStudyEnd) }
        return .allowed
    }
}
