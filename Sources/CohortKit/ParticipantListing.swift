public import CohortCore
import CohortStore
import Foundation
import CohortCompliance

/// One line of `cohort participant list`.
public struct ParticipantRow: Sendable, Codable {
    public var code: String
    public var status: String
    public var enrolledOn: String
    public var timeZone: String
    public var sex: String
    /// `none`, or the consent version in force (with `re-consent due` when due).
    public var consent: String
    public var records: Int
    public var identity: ParticipantIdentity?

    enum CodingKeys: String, CodingKey {
        case code, status, sex, consent, records, identity
        case enrolledOn = "enrolled_on"
        case timeZone = "time_zone"
    }
}

/// The roster as the coordinator sees it.
public struct ParticipantListing: Sendable {
    public let workspace: Workspace
    public init(workspace: Workspace) { self.workspace = workspace }

    public func rows(withIdentities: Bool) throws -> [ParticipantRow] {
        let consent = try ConsentSummary.states(workspace: workspace)
        return try workspace.store.participants(withIdentities: withIdentities).map { stored in
            let p = stored.participant
            return ParticipantRow(
                code: p.code, status: p.status.rawValue, enrolledOn: p.enrolledOn.description, timeZone: p.timeZone, sex: p.sex.rawValue,
                consent: consent[p.id] ?? "none", records: try workspace.store.recordCount(stored.handle), identity: p.identity)
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
