/// A typed token that replaces an identifier in free text (`[NAME]`, `[PHONE]`…).
package enum ScrubToken: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    case name = "NAME"
    case email = "EMAIL"
    case phone = "PHONE"
    case ssn = "SSN"
    case url = "URL"
    case ip = "IP"
    case address = "ADDRESS"
    case date = "DATE"
    case mrn = "MRN"
    case device = "DEVICE"
    case id = "ID"
    /// An age over 89, written as "90 or older" (Safe Harbor).
    case age = "AGE"
    /// A word the allow-list does not know to be safe, of no type a detector recognises.
    case redacted = "REDACTED"

    /// The text put in place of the identifier: `[NAME]`; for an age over 89, `90 or older`.
    public var text: String { self == .age ? "90 or older" : "[\(rawValue)]" }

    init(_ kind: IdentifierKind) {
        switch kind {
        case .name: self = .name
        case .email: self = .email
        case .phone: self = .phone
        case .birthDate: self = .date
        case .mrn: self = .mrn
        case .address: self = .address
        case .device: self = .device
        case .code: self = .id
        case .unknownToken: self = .redacted
        }
    }

    package static func < (lhs: ScrubToken, rhs: ScrubToken) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// How many tokens of each kind scrubbing put in.
package struct ScrubCounts: Sendable, Hashable, Codable {
    /// Token (`NAME`) → count.
    public private(set) var counts: [ScrubToken: Int] = [:]

    package init() {}

    /// The number of `token`s.
    package subscript(token: ScrubToken) -> Int { counts[token] ?? 0 }

    /// Every replacement, whatever its kind.
    public var total: Int { counts.values.reduce(0, +) }

    mutating func add(_ token: ScrubToken, _ n: Int = 1) { counts[token, default: 0] += n }

    /// Adds `other`'s counts to these.
    public mutating func merge(_ other: ScrubCounts) {
        for (token, n) in other.counts { counts[token, default: 0] += n }
    }

    /// Counts keyed by the token's name (`NAME`), for reports.
    package var byName: [String: Int] { Dictionary(uniqueKeysWithValues: counts.map { ($0.key.rawValue, $0.value) }) }
}
