import COpenSSL
import CohortCore

/// Owns an OpenSSL `EVP_PKEY` holding an Ed25519 key. Created on demand from the raw bytes the
/// public `Sendable` key structs store, and freed as soon as the operation is done.
final class EVPKey {
    let pointer: OpaquePointer

    private init(_ pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        EVP_PKEY_free(pointer)
    }

    static func ed25519(privateSeed seed: [UInt8]) throws -> EVPKey {
        guard seed.count == 32 else {
            throw CohortError(.invalidInput, "Ed25519 private key must be 32 bytes")
        }
        guard let key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, seed, seed.count) else {
            throw OpenSSL.systemError("could not load the Ed25519 private key")
        }
        return EVPKey(key)
    }

    static func ed25519(publicKey bytes: [UInt8]) throws -> EVPKey {
        guard bytes.count == 32 else {
            throw CohortError(.invalidInput, "Ed25519 public key must be 32 bytes")
        }
        guard let key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, bytes, bytes.count) else {
            throw CohortError(.security, "Ed25519 public key is not valid", underlying: OpenSSL.drainErrors())
        }
        return EVPKey(key)
    }

    /// Parses a PEM private key (PKCS#8 "PRIVATE KEY"); refuses other key types.
    static func ed25519(privatePEM pem: String) throws -> EVPKey {
        let bio = try MemoryBIO(contents: Array(pem.utf8))
        guard let key = PEM_read_bio_PrivateKey(bio.pointer, nil, nil, nil) else {
            throw CohortError(
                .invalidInput, "text is not a PEM private key", hint: "expected a PKCS#8 \"PRIVATE KEY\" PEM block",
                underlying: OpenSSL.drainErrors())
        }
        let wrapped = EVPKey(key)
        try wrapped.requireEd25519()
        return wrapped
    }

    /// Parses a PEM public key (SPKI "PUBLIC KEY"); refuses other key types.
    static func ed25519(publicPEM pem: String) throws -> EVPKey {
        let bio = try MemoryBIO(contents: Array(pem.utf8))
        guard let key = PEM_read_bio_PUBKEY(bio.pointer, nil, nil, nil) else {
            throw CohortError(
                .invalidInput, "text is not a PEM public key", hint: "expected an SPKI \"PUBLIC KEY\" PEM block",
                underlying: OpenSSL.drainErrors())
        }
        let wrapped = EVPKey(key)
        try wrapped.requireEd25519()
        return wrapped
    }

    private func requireEd25519() throws {
        guard EVP_PKEY_get_id(pointer) == EVP_PKEY_ED25519 else {
            throw CohortError(.invalidInput, "key is not an Ed25519 key", hint: "generate one with `cohort keys init`")
        }
    }

    var rawPrivateKey: [UInt8] {
        get throws {
            var bytes = [UInt8](repeating: 0, count: 32)
            var length = bytes.count
            try OpenSSL.check(EVP_PKEY_get_raw_private_key(pointer, &bytes, &length), "could not read the Ed25519 private key")
            guard length == 32 else { throw OpenSSL.systemError("Ed25519 private key has an unexpected length") }
            return bytes
        }
    }

    var rawPublicKey: [UInt8] {
        get throws {
            var bytes = [UInt8](repeating: 0, count: 32)
            var length = bytes.count
            try OpenSSL.check(EVP_PKEY_get_raw_public_key(pointer, &bytes, &length), "could not read the Ed25519 public key")
            guard length == 32 else { throw OpenSSL.systemError("Ed25519 public key has an unexpected length") }
            return bytes
        }
    }

    /// PKCS#8 "PRIVATE KEY" PEM, unencrypted.
    func privatePEM() throws -> String {
        let bio = try MemoryBIO()
        try OpenSSL.check(
            PEM_write_bio_PrivateKey(bio.pointer, pointer, nil, nil, 0, nil, nil), "could not encode the private key as PEM")
        return try bio.text()
    }

    /// SPKI "PUBLIC KEY" PEM.
    func publicPEM() throws -> String {
        let bio = try MemoryBIO()
        try OpenSSL.check(PEM_write_bio_PUBKEY(bio.pointer, pointer), "could not encode the public key as PEM")
        return try bio.text()
    }

    /// A 64-byte pure Ed25519 signature (no pre-hash).
    func sign(_ message: [UInt8]) throws -> [UInt8] {
        let context = try DigestContext()
        try OpenSSL.check(EVP_DigestSignInit(context.pointer, nil, nil, nil, pointer), "Ed25519 signing setup failed")
        var signature = [UInt8](repeating: 0, count: 64)
        var length = signature.count
        let result = withNonNullBytes(message) { bytes, count in
            EVP_DigestSign(context.pointer, &signature, &length, bytes, count)
        }
        try OpenSSL.check(result, "Ed25519 signing failed")
        guard length == 64 else { throw OpenSSL.systemError("Ed25519 signature has an unexpected length") }
        return signature
    }

    func verify(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard signature.count == 64, let context = try? DigestContext() else { return false }
        guard EVP_DigestVerifyInit(context.pointer, nil, nil, nil, pointer) == 1 else {
            _ = OpenSSL.drainErrors()
            return false
        }
        let result = withNonNullBytes(message) { bytes, count in
            EVP_DigestVerify(context.pointer, signature, signature.count, bytes, count)
        }
        _ = OpenSSL.drainErrors()
        return result == 1
    }
}
