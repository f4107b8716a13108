/// Fingerprints that identify a keystore's keys without revealing them.
///
/// Safe to print, log, and put into de-identification reports and export manifests: each is
/// `SHA256:` + 64 lowercase hex digits. For the secrets the hash covers a fixed per-key domain
/// label before the key bytes, so a fingerprint is never the plain hash of a secret and cannot
/// be matched against hashes computed for another purpose.
public struct KeyFingerprints: Sendable, Equatable, Hashable, Codable {
    /// Fingerprint of `study.secret`.
    public var studySecret: String
    /// Fingerprint of `pii.key`.
    public var piiKey: String
    /// Fingerprint of the Ed25519 signing key: its public key's ``Ed25519PublicKey/fingerprint``.
    public var signing: String

    /// Fingerprints as given.
    public init(studySecret: String, piiKey: String, signing: String) {
        self.studySecret = studySecret
        self.piiKey = piiKey
        self.signing = signing
    }

    /// `SHA256:` + hex of SHA-256(`label` ‖ `secret`).
    static func secret(_ secret: [UInt8], label: String) -> String {
        "SHA256:" + SHA256.hex(Array(label.utf8) + secret)
    }
}
