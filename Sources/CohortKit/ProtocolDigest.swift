import CohortCrypto
public import Foundation

/// The SHA-256 protocols are pinned by.
public enum ProtocolDigest {
    public static func sha256(_ canonicalJSON: Data) -> String { SHA256.hex(canonicalJSON) }
}
