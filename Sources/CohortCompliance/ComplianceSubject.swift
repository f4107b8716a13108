package import CohortCore
package import Foundation

/// The facts about one participant that compliance, consent and withdrawal rules need.
///
/// A small value the store can stream without decrypting identifiers. `code` is the study code
/// (`P-0007`): it appears in coordinator-facing reports and errors, never in exports (see
/// `ComplianceReport.forExport(pseudonym:)`).
package struct ComplianceSubject: Sendable, Hashable, Codable {
    /// Internal participant id (random UUID made at enrollment).
    public var id: UUID
    /// Study code, e.g. `P-0007`.
    public var code: String
    /// IANA time zone identifier; participant-days are counted in it.
    public var timeZone: String
    /// The enrollment day (a local calendar day in `timeZone`).
    public var enrolledOn: CivilDate
    /// When the participant withdrew (first withdrawal; escalations keep it), if they did.
    package var withdrawnAt: Timestamp?
    /// Where the participant stands.
    public var status: ParticipantStatus

    /// Creates a subject from its parts.
    package init(
        id: UUID, code: String, timeZone: String, enrolledOn: CivilDate, withdrawnAt: Timestamp? = nil,
        status: ParticipantStatus = .active
    ) {
        self.id = id
        self.code = code
        self.timeZone = timeZone
        self.enrolledOn = enrolledOn
        self.withdrawnAt = withdrawnAt
        self.status = status
    }

    /// The subject facts of a roster participant.
    package init(_ participant: Participant) {
        self.init(
            id: participant.id, code: participant.code, timeZone: participant.timeZone, enrolledOn: participant.enrolledOn,
            withdrawnAt: participant.withdrawnAt, status: participant.status)
    }

    /// The participant's time zone, or an error naming the participant's code when the
    /// identifier is not a known IANA zone.
    package func resolvedTimeZone() throws -> TimeZone {
        guard !timeZone.isEmpty, let zone = TimeZone(identifier: timeZone) else {
            throw CohortError(
                .invalidInput, "participant \(code) has an unknown time zone", at: .init(field: "time_zone"),
                hint: "set an IANA time zone identifier such as Europe/Berlin or America/New_York for this participant")
        }
        return zone
    }

    /// The last study day (inclusive): enrollment day + `durationDays` − 1.
    package func studyEnd(durationDays: Int) -> CivilDate { enrolledOn.adding(days: durationDays - 1) }

    enum CodingKeys: String, CodingKey {
        case id, code, status
        case timeZone = "time_zone"
        case enrolledOn = "enrolled_on"
        case withdrawnAt = "withdrawn_at"
    }
}
