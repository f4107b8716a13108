/// `data/json/study.json`: what the export is, under which protocol and policy, for whom, and
/// how much it holds.
struct StudySummary: Encodable, Sendable {
    var study: Study
    var protocolRevision: Int
    var protocolSHA256: String
    var policySHA256: String
    var exportedAt: String
    var recipient: String
    var toolVersion: String
    var formats: [String]
    var deidentification: [String: Int]?
    var tables: [String: Int]
    var exclusions: [String: Int]

    struct Study: Encodable, Sendable {
        var id: String
        var title: String
        var institution: String
    }

    enum CodingKeys: String, CodingKey {
        case study, recipient, formats, deidentification, tables, exclusions
        case protocolRevision = "protocol_revision"
        case protocolSHA256 = "protocol_sha256"
        case policySHA256 = "policy_sha256"
        case exportedAt = "exported_at"
        case toolVersion = "tool_version"
    }
}
