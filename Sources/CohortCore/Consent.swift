public import Foundation

/// How a consent was signed. The evidence (a typed name, a drawing's digest, a wet-ink
/// reference) is an identifier and is stored encrypted.
public enum SignatureKind: String, Sendable, Hashable, Codable, CaseIterable {
    case typed
    case drawn
    case wetInk = "wet-ink"
}

/// What the participant agreed their data may be used for: a scope name (lower-case letters,
/// digits and `-`, at most 32). The protocol says which export audiences each scope allows
/// (`consent.sharing_scopes`); `broad`, `study-only` and `no-sharing` are defined by default.
public struct SharingScope: RawRepresentable, Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// The scope's name.
    public let rawValue: String

    /// The scope named `rawValue`, or nil when it is not a scope name.
    public init?(rawValue: String) {
        let bytes = Array(rawValue.utf8)
        guard (1...32).contains(bytes.count), let first = bytes.first, (97...122).contains(first),
            bytes.allSatisfy({ (97...122).contains($0) || (48...57).contains($0) || $0 == 45 })
        else { return nil }
        self.rawValue = rawValue
    }

    private init(known: String) { rawValue = known }

    /// Any qualified researcher: the study team and outside recipients.
    public static let broad = SharingScope(known: "broad")
    /// This study only: the study team, never an outside recipient.
    package static let studyOnly = SharingScope(known: "study-only")
    /// Nobody outside the data's custody: never exported.
    package static let noSharing = SharingScope(known: "no-sharing")
    /// The scopes every protocol defines, with their default audiences.
    package static let builtIn: [SharingScope: Set<ExportAudience>] = [
        .broad: [.studyTeam, .external], .studyOnly: [.studyTeam], .noSharing: [],
    ]

    public var description: String { rawValue }

    public static func < (lhs: SharingScope, rhs: SharingScope) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Who an export is for: the study's own team, or a recipient outside it. A participant's
/// sharing scope decides which audiences may receive their data.
public enum ExportAudience: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// The study team (investigators and staff under the study's IRB approval).
    case studyTeam = "study-team"
    /// Anyone outside the study team (an analytics core, a collaborator, a repository).
    case external

    public static func < (lhs: ExportAudience, rhs: ExportAudience) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Where a consent row stands. History is never overwritten: a re-consent supersedes.
public enum ConsentStatus: String, Sendable, Hashable, Codable, CaseIterable {
    case active
    case superseded
    case withdrawn
}

/// One consent event of a participant.
public struct Consent: Sendable, Hashable, Codable {
    public var id: UUID
    public var participantID: UUID
    public var version: String
    /// SHA-256 (hex) of the exact consent document text of that version.
    public var documentSHA256: String
    public var signedAt: Timestamp
    public var signatureKind: SignatureKind
    public var sharing: SharingScope
    public var status: ConsentStatus
    /// When the row was recorded (may be after `signedAt` for paper consents).
    public var recordedAt: Timestamp

    public init(
        id: UUID, participantID: UUID, version: String, documentSHA256: String, signedAt: Timestamp, signatureKind: SignatureKind,
        sharing: SharingScope, status: ConsentStatus, recordedAt: Timestamp
    ) {
        self.id = id
        self.participantID = participantID
        self.version = version
        self.documentSHA256 = documentSHA256
        self.signedAt = signedAt
        self.signatureKind = signatureKind
        self.sharing = sharing
        self.status = status
        self.recordedAt = recordedAt
    }
}

/// How far a withdrawal goes. Escalation stop → exclude → erase is allowed, never the reverse.
public enum WithdrawalMode: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// No new data; existing data stays in exports.
    case stop
    /// No new data; left out of every later export.
    case exclude
    /// Records and identifiers deleted; consent rows and pseudonymous audit events stay.
    case erase

    var order: Int {
        switch self {
        case .stop: 0
        case .exclude: 1
        case .erase: 2
        }
    }

    public static func < (lhs: WithdrawalMode, rhs: WithdrawalMode) -> Bool { lhs.order < rhs.order }

    /// The participant status this mode leaves.
    public var status: ParticipantStatus {
        switch self {
        case .stop: .stopped
        case .exclude: .excluded
        case .erase: .erased
        }
    }
}

extension ParticipantStatus {
    /// The withdrawal mode this status records, if any.
    package var withdrawalMode: WithdrawalMode? {
        switch self {
        case .active: nil
        case .stopped: .stop
        case .excluded: .exclude
        case .erased: .erase
        }
    }
}
