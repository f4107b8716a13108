/// The kind of a participant identifier the residual scanner looks for.
public enum IdentifierKind: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    case name
    case email
    case phone
    case birthDate = "birth_date"
    case mrn
    case address
    case device
    /// The study code (`P-0001`).
    case code
    /// An unreviewed unknown token in free text: a word the scrubber's allow-list does not know
    /// to be safe and that is no typed token (see ``ResidualScanner``).
    case unknownToken = "unknown_token"

    public static func < (lhs: IdentifierKind, rhs: IdentifierKind) -> Bool {
        (allCases.firstIndex(of: lhs) ?? 0) < (allCases.firstIndex(of: rhs) ?? 0)
    }
}
