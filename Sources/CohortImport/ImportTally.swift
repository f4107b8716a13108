/// What an outside-source import saw and did with it, by category: the summary a coordinator
/// reads to know what was skipped and why. Counts only, never values.
public struct ImportTally: Sendable, Equatable, Codable {
    /// Rows (health_metrics) or resources (FHIR) read.
    public var seen = 0
    /// Records handed on to validation.
    public var records = 0
    /// Per metric (health_metrics column) or kind (FHIR): records handed on.
    public var perItem: [String: Int] = [:]
    /// Reason → count of items not imported (`not collected: heart_rate_max`, `resource type: Encounter`…).
    public var skipped: [String: Int] = [:]
    /// Rows of users the user map does not name (never imported).
    public var unmappedRows = 0
    /// Distinct users the user map does not name.
    public var unmappedUsers = 0
    /// FHIR Patient resources matched to a participant.
    public var patients = 0

    public init() {}

    mutating func skip(_ reason: String, count: Int = 1) { skipped[reason, default: 0] += count }

    mutating func took(_ item: String) {
        records += 1
        perItem[item, default: 0] += 1
    }

    enum CodingKeys: String, CodingKey {
        case seen, records, skipped, patients
        case perItem = "per_item"
        case unmappedRows = "unmapped_rows"
        case unmappedUsers = "unmapped_users"
    }
}
