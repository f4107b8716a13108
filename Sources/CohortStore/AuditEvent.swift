import Foundation

/// One entry of the hash-linked audit trail. Carries internal ids only — never an identifier,
/// a key, or a record value.
public struct AuditEvent: Sendable, Hashable, Codable {
    /// Position in the chain, from 1.
    public var seq: Int64
    /// UTC instant, ISO 8601 with milliseconds.
    public var at: String
    /// Who acted, as committed: a `redactable:` reference to the name (events written before
    /// redaction existed carry the name itself).
    public var actor: String
    /// What happened, e.g. `participant.withdraw`.
    public var action: String
    /// The internal id the event concerns, if any.
    public var subject: String?
    /// Counts, hashes, versions — never PII.
    public var details: [String: String]
    /// The previous event's hash (``genesisHash`` for the first).
    public var prevHash: String
    /// SHA-256 (hex) of ``hashInput(seq:at:actor:action:subject:details:prevHash:)``.
    public var hash: String
    /// The texts behind this event's redactable references (`actor`, or a details key, whose
    /// committed value is `redactable:<salted SHA-256>`): the text, or `[redacted]` once it was
    /// erased. Not part of the hash; nil when the event has none.
    public var revealed: [String: String]?

    /// What a reader is shown for a redacted text.
    public static let redactedText = "[redacted]"

    /// The actor as a reader sees it (the text behind a redactable reference).
    public var displayActor: String { revealed?["actor"] ?? actor }

    /// The details as a reader sees them (texts behind redactable references).
    public var displayDetails: [String: String] {
        guard let revealed else { return details }
        return details.reduce(into: [:]) { result, entry in result[entry.key] = revealed["details." + entry.key] ?? entry.value }
    }

    public init(seq: Int64, at: String, actor: String, action: String, subject: String?, details: [String: String], prevHash: String, hash: String) {
        self.seq = seq
        self.at = at
        self.actor = actor
        self.action = action
        self.subject = subject
        self.details = details
        self.prevHash = prevHash
        self.hash = hash
    }

    /// The hash of the event before the first: 64 zeros.
    public static let genesisHash = String(repeating: "0", count: 64)

    /// The bytes hashed: `prev_hash` (hex, ASCII) followed by the canonical JSON of
    /// `{action, actor, at, details, seq, subject}` (sorted keys, no spaces).
    public static func hashInput(seq: Int64, at: String, actor: String, action: String, subject: String?, details: [String: String], prevHash: String)
        throws -> [UInt8]
    {
        let body = Body(seq: seq, at: at, actor: actor, action: action, subject: subject, details: details)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(prevHash.utf8) + Array(try encoder.encode(body))
    }

    struct Body: Encodable {
        var seq: Int64
        var at: String
        var actor: String
        var action: String
        var subject: String?
        var details: [String: String]

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(seq, forKey: .seq)
            try c.encode(at, forKey: .at)
            try c.encode(actor, forKey: .actor)
            try c.encode(action, forKey: .action)
            if let subject { try c.encode(subject, forKey: .subject) } else { try c.encodeNil(forKey: .subject) }
            try c.encode(details, forKey: .details)
        }

        enum CodingKeys: String, CodingKey { case seq, at, actor, action, subject, details }
    }

    enum CodingKeys: String, CodingKey {
        case seq, at, actor, action, subject, details, hash, revealed
        case prevHash = "prev_hash"
    }
}

/// The outcome of recomputing the audit chain.
public struct AuditVerification: Sendable, Codable {
    public var events: Int
    public var checkpoints: Int
    public var headSeq: Int64
    public var headHash: String
    /// The first problem found, naming the event; nil when the chain is intact.
    public var firstProblem: String?
    public var brokenAtSeq: Int64?
    /// The event `audit.head` (outside the database) names, when it was compared.
    public var auditHeadSeq: Int64?
    /// True when the first problem is a checkpoint whose signature does not verify (or whose key
    /// was revoked before it), so a store can add who stored it without reading the message.
    package var checkpointSignatureFailed = false

    public var isIntact: Bool { firstProblem == nil }

    enum CodingKeys: String, CodingKey {
        case events, checkpoints
        case headSeq = "head_seq"
        case headHash = "head_hash"
        case firstProblem = "first_problem"
        case brokenAtSeq = "broken_at_seq"
        case auditHeadSeq = "audit_head_seq"
    }
}
