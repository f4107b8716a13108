import COpenSSL
import CohortCore

/// An Ed25519 signing key (RFC 8032), stored as its 32-byte seed.
///
/// OpenSSL objects are created per operation, so the key is a plain `Sendable` value. Its
/// `description` never shows key material, only the public key fingerprint.
public struct Ed25519PrivateKey: Sendable, CustomStringConvertible, CustomReflectable {
    /// The 32-byte private seed. Keep it secret: never log, export, or put it in an error.
    public let rawRepresentation: [UInt8]
    /// The matching public key.
    public let publicKey: Ed25519PublicKey
    /// The key as an unencrypted PKCS#8 "PRIVATE KEY" PEM block (readable by `openssl pkey`).
    ///
    /// Encoded once when the key is made, so reading it cannot fail.
    public let pemRepresentation: String

    /// A fresh key from the secure random generator.
    public static func generate() throws -> Ed25519PrivateKey {
        try Ed25519PrivateKey(rawRepresentation: SecureRandom.bytes(32))
    }

    /// The key whose seed is `rawRepresentation` (32 bytes).
    ///
    /// - Throws: `.invalidInput` when the seed is not 32 bytes.
    public init(rawRepresentation: [UInt8]) throws {
        let key = try EVPKey.ed25519(privateSeed: rawRepresentation)
        self.rawRepresentation = rawRepresentation
        self.publicKey = try Ed25519PublicKey(openSSLKey: key)
        self.pemRepresentation = try key.privatePEM()
    }

    /// The key in a PKCS#8 "PRIVATE KEY" PEM block, as `openssl genpkey -algorithm ed25519` writes.
    ///
    /// - Throws: `.invalidInput` when the text is not an unencrypted PEM private key or the key is
    ///   not Ed25519.
    public init(pemRepresentation: String) throws {
        let key = try EVPKey.ed25519(privatePEM: pemRepresentation)
        self.rawRepresentation = try key.rawPrivateKey
        self.publicKey = try Ed25519PublicKey(openSSLKey: key)
        // Re-encode rather than keep the input, so the stored PEM is always canonical PKCS#8.
        self.pemRepresentation = try key.privatePEM()
    }

    /// The 64-byte Ed25519 signature of `message` (pure Ed25519, no pre-hash), deterministic for a
    /// given key and message.
    public func signature(for message: [UInt8]) throws -> [UInt8] {
        try EVPKey.ed25519(privateSeed: rawRepresentation).sign(message)
    }

    /// Redacted: shows only the public key fingerprint.
    public var description: String {
        "Ed25519PrivateKey(public: \(publicKey.fingerprint))"
    }

    /// Redacted for `dump` and debuggers: the public key fingerprint only.
    public var customMirror: Mirror {
        Mirror(self, children: ["publicKey": publicKey.fingerprint], displayStyle: .struct)
    }
}
