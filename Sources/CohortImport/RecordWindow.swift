package import CohortCore
package import Foundation

/// When one participant's records may be dated, and what admits them: from the start of the
/// enrolment day to the end of the study period (both midnights in the participant's time
/// zone), no later than five minutes after now, and allowed by the consent rule. Every importer
/// asks this one type — ``RecordValidator`` for each row of a file, the Apple Health importer
/// for each sample — so the rules are written once.
package struct RecordWindow: Sendable {
    /// Why a start instant lies outside the window, in the order the checks are made.
    package enum PeriodRefusal: Sendable, Equatable {
        case beforeEnrollment
        case afterStudyPeriod
        case future
    }

    /// The first instant of the enrolment day, epoch milliseconds.
    package let firstMs: Int64
    /// The first instant after the study period, epoch milliseconds.
    package let lastMs: Int64
    /// Starts after this instant are from the future (now plus five minutes of clock skew).
    package let latestMs: Int64
    /// The consent and withdrawal rule; nil when the participant's zone is unknown to it.
    package let admission: (any RecordAdmission)?

    /// The window of a participant enrolled on `enrolledOn` in `timeZone`, for a study of
    /// `durationDays`, at `now`.
    package init(enrolledOn: CivilDate, timeZone: TimeZone, durationDays: Int, now: Date, admission: (any RecordAdmission)?) {
        let firstLocal = Int64(enrolledOn.daysSinceEpoch) * 86_400_000
        let lastLocal = Int64(enrolledOn.adding(days: durationDays).daysSinceEpoch) * 86_400_000
        firstMs = firstLocal - Int64(Timestamp.resolveOffset(localMs: firstLocal, in: timeZone)) * 1000
        lastMs = lastLocal - Int64(Timestamp.resolveOffset(localMs: lastLocal, in: timeZone)) * 1000
        latestMs = Int64(now.timeIntervalSince1970 * 1000) + 5 * 60_000
        self.admission = admission
    }

    /// Why a record starting at `startMs` is outside the study period or from the future; nil
    /// when it is inside.
    package func periodRefusal(_ startMs: Int64) -> PeriodRefusal? {
        if startMs < firstMs { return .beforeEnrollment }
        if startMs >= lastMs { return .afterStudyPeriod }
        if startMs > latestMs { return .future }
        return nil
    }

    /// Why consent does not admit data of participant `code` starting at `start`; nil when it
    /// does. No admission rule (a time zone the consent rules do not know) admits nothing.
    package func consentRefusal(at start: Timestamp, code: String) -> CohortError? {
        guard let admission else {
            return CohortError(.invalidInput, "participant \(code) has an unknown time zone")
        }
        guard var error = admission.refusal(at: start) else { return nil }
        error.message = "participant \(code): " + error.message
        return error
    }
}
