import CohortCrypto
public import Foundation

/// `cohort keys`: create a keystore, or read one and report its fingerprints (never the keys).
public enum KeysService {
    /// The SHA-256 fingerprints of a keystore's three keys (safe to print and to encode as JSON).
    public struct Fingerprints: Sendable, Codable, Equatable {
        /// Fingerprint of `study.secret`.
        public var studySecret: String
        /// Fingerprint of `pii.key`.
        public var piiKey: String
        /// Fingerprint of the Ed25519 signing key (its public key's).
        public var signing: String

        /// Label and value per key, in the order `keys show` prints them.
        public var lines: [(label: String, value: String)] {
            [("study.secret", studySecret), ("pii.key", piiKey), ("signing key", signing + "  (Ed25519)")]
        }

        init(_ fingerprints: KeyFingerprints) {
            studySecret = fingerprints.studySecret
            piiKey = fingerprints.piiKey
            signing = fingerprints.signing
        }
    }

    /// Creates `study.secret`, `pii.key` and the Ed25519 key pair in `directory` (mode 0600).
    public static func create(at directory: URL) throws -> Fingerprints {
        Fingerprints(try Keystore.create(at: directory).fingerprints)
    }

    /// Loads the keystore in `directory` (refusing open permissions) and returns its fingerprints.
    public static func show(at directory: URL) throws -> Fingerprints {
        Fingerprints(try Keystore.load(from: directory).fingerprints)
    }
}
