import CohortCrypto
public import Foundation

/// The SHA-256 protocols are pinned by.
public enum ProtocolDigest {
    /// The lowercase hex SHA-256 of a protocol's canonical JSON.
    public static func sha256(_ canonicalJSON: Data) -> String { SHA256.hex(canonicalJSON) }
}
