import COpenSSL
import CohortCore

/// An Ed25519 verification key (RFC 8032), stored as its 32 raw bytes.
public struct Ed25519PublicKey: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// Keys are equal when their raw bytes are (the PEM is derived from them).
    public static func == (lhs: Ed25519PublicKey, rhs: Ed25519PublicKey) -> Bool {
        lhs.rawRepresentation == rhs.rawRepresentation
    }

    /// Hashes the raw bytes.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(rawRepresentation)
    }

    /// The 32-byte encoded public key.
    public let rawRepresentation: [UInt8]
    /// The key as an SPKI "PUBLIC KEY" PEM block (readable by `openssl pkey -pubin`).
    ///
    /// Encoded once when the key is made, so reading it cannot fail.
    public let pemRepresentation: String

    /// The key whose encoding is `rawRepresentation` (32 bytes).
    ///
    /// - Throws: `.invalidInput` when the length is not 32; `.security` when OpenSSL rejects it.
    public init(rawRepresentation: [UInt8]) throws {
        try self.init(openSSLKey: EVPKey.ed25519(publicKey: rawRepresentation))
    }

    /// The public half of an OpenSSL key (public or private).
    init(openSSLKey key: EVPKey) throws {
        self.rawRepresentation = try key.rawPublicKey
        self.pemRepresentation = try key.publicPEM()
    }

    /// The key in an SPKI "PUBLIC KEY" PEM block, as `openssl pkey -pubout` writes.
    ///
    /// - Throws: `.invalidInput` when the text is not a PEM public key or the key is not Ed25519.
    public init(pemRepresentation: String) throws {
        try self.init(openSSLKey: EVPKey.ed25519(publicPEM: pemRepresentation))
    }

    /// Whether `signature` is a valid Ed25519 signature of `message` under this key.
    ///
    /// Malformed signatures (wrong length, invalid encoding) are simply invalid.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard let key = try? EVPKey.ed25519(publicKey: rawRepresentation) else { return false }
        return key.verify(signature, for: message)
    }

    /// `SHA256:` followed by the lowercase hex SHA-256 of the 32 raw key bytes.
    ///
    /// Check it with stock tools: `openssl pkey -pubin -in signing.pub.pem -outform DER | tail -c 32 | sha256sum`.
    public var fingerprint: String {
        "SHA256:" + SHA256.hex(rawRepresentation)
    }

    /// The fingerprint.
    public var description: String {
        "Ed25519PublicKey(\(fingerprint))"
    }
}
