/// A signed point in the audit chain: "the chain had `seq` events and its head hash was
/// `headHash`". Carried in every export manifest so an auditor can tie an export to the trail.
public struct AuditCheckpoint: Sendable, Hashable, Codable {
    public var seq: Int64
    /// Lower-case hex SHA-256 of the event at `seq`.
    public var headHash: String
    /// Base64 Ed25519 signature over `signedBytes`, by the study's signing key.
    public var signature: String

    package init(seq: Int64, headHash: String, signature: String) {
        self.seq = seq
        self.headHash = headHash
        self.signature = signature
    }

    /// The exact bytes signed: `cohort/audit-checkpoint@1 seq=<seq> head=<headHash>`.
    public var signedBytes: [UInt8] { Self.message(seq: seq, headHash: headHash) }

    public static func message(seq: Int64, headHash: String) -> [UInt8] {
        Array("cohort/audit-checkpoint@1 seq=\(seq) head=\(headHash)".utf8)
    }

    enum CodingKeys: String, CodingKey {
        case seq, signature
        case headHash = "head_hash"
    }
}
