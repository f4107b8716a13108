public import CohortCore
import CohortStore
import Foundation
import CohortCompliance

/// One line of `cohort participant list`.
public struct ParticipantRow: Sendable, Codable {
    /// The study code (coordinator's view; never exported).
    public var code: String
    /// `active`, `stopped`, `excluded` or `erased`.
    public var status: String
    /// The enrolment date, `YYYY-MM-DD` in the participant's time zone.
    public var enrolledOn: String
    /// The participant's IANA time zone.
    public var timeZone: String
    /// The sex recorded at enrolment.
    public var sex: String
    /// `none`, or the consent version in force (with `re-consent due` when due).
    public var consent: String
    /// Records stored for the participant.
    public var records: Int
    /// The participant's site (multi-site studies); nil when none.
    public var site: String?
    /// The decrypted identifiers; nil unless asked for with `withIdentities`.
    public var identity: ParticipantIdentity?

    enum CodingKeys: String, CodingKey {
        case code, status, sex, consent, records, identity, site
        case enrolledOn = "enrolled_on"
        case timeZone = "time_zone"
    }
}

/// The roster as the coordinator sees it.
public struct ParticipantListing: Sendable {
    /// The workspace whose roster is listed.
    public let workspace: Workspace
    /// A listing of `workspace`'s roster.
    public init(workspace: Workspace) { self.workspace = workspace }

    /// One row per enrolled participant, in roster order; identities decrypted only when `withIdentities` is
    /// true; only the participants of `site` when given (see ``Workspace/participants(site:withIdentities:)``,
    /// whose errors it throws besides the store's and keystore's).
    public func rows(withIdentities: Bool, site: String? = nil) throws -> [ParticipantRow] {
        let consent = try ConsentSummary.states(workspace: workspace)
        return try workspace.participants(site: site, withIdentities: withIdentities).map { stored in
            let p = stored.participant
            return ParticipantRow(
                code: p.code, status: p.status.rawValue, enrolledOn: p.enrolledOn.description, timeZone: p.timeZone, sex: p.sex.rawValue,
                consent: consent[p.id] ?? "none", records: try workspace.store.recordCount(stored.handle), site: p.site,
                identity: p.identity)
        }
    }
}

/// Consent state per participant, for listings.
enum ConsentSummary {
    static func states(workspace: Workspace) throws -> [UUID: String] {
        var result: [UUID: String] = [:]
        for row in try ConsentService(workspace: workspace).status() {
            guard let version = row.version else { continue }
            result[row.participantID] = version + (row.reconsentDue ? " (re-consent due)" : "") + (row.withdrawal.map { " (\($0.rawValue))" } ?? "")
        }
        return result
    }
}
