import COpenSSL
import CohortCore

/// AES-256-GCM authenticated encryption, through OpenSSL's `EVP_CIPHER` API.
///
/// The sealed form is `nonce (12 bytes) ‖ ciphertext ‖ tag (16 bytes)`, so a stored value
/// carries everything but the key. Never reuse a nonce with the same key: leave `nonce` `nil`
/// and a fresh random one is drawn for every seal.
public enum AESGCM {
    /// Key length in bytes (AES-256).
    public static let keyByteCount = 32
    /// Nonce length in bytes.
    public static let nonceByteCount = 12
    /// Authentication tag length in bytes.
    public static let tagByteCount = 16

    /// Encrypts and authenticates `plaintext` (and authenticates `aad` without encrypting it).
    ///
    /// - Parameters:
    ///   - key: 32 bytes.
    ///   - nonce: 12 bytes; `nil` draws 12 random bytes. Pass one only for known-answer tests.
    ///   - aad: additional data bound to the ciphertext (e.g. a column name and row id).
    /// - Returns: `nonce ‖ ciphertext ‖ tag`.
    /// - Throws: `.invalidInput` for a wrong key or nonce length; `.system` when OpenSSL fails.
    public static func seal(
        _ plaintext: [UInt8], key: [UInt8], nonce: [UInt8]? = nil, authenticating aad: [UInt8] = []
    ) throws -> [UInt8] {
        try checkKey(key)
        guard plaintext.count <= Int(Int32.max) - 16, aad.count <= Int(Int32.max) else {
            throw CohortError(.invalidInput, "value is too large to encrypt in one piece")
        }
        let nonce = try nonce ?? SecureRandom.bytes(nonceByteCount)
        guard nonce.count == nonceByteCount else {
            throw CohortError(.invalidInput, "AES-GCM nonce must be \(nonceByteCount) bytes")
        }
        let context = try CipherContext()
        try OpenSSL.check(EVP_EncryptInit_ex(context.pointer, EVP_aes_256_gcm(), nil, nil, nil), "AES-GCM setup failed")
        try OpenSSL.check(EVP_EncryptInit_ex(context.pointer, nil, nil, key, nonce), "AES-GCM key setup failed")
        var length: Int32 = 0
        if !aad.isEmpty {
            try OpenSSL.check(
                EVP_EncryptUpdate(context.pointer, nil, &length, aad, Int32(aad.count)), "AES-GCM failed on the additional data")
        }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
        if !plaintext.isEmpty {
            try OpenSSL.check(
                EVP_EncryptUpdate(context.pointer, &ciphertext, &length, plaintext, Int32(plaintext.count)),
                "AES-GCM encryption failed")
            guard Int(length) == plaintext.count else { throw OpenSSL.systemError("AES-GCM produced a short ciphertext") }
        }
        var finalBlock = [UInt8](repeating: 0, count: 16)
        try OpenSSL.check(EVP_EncryptFinal_ex(context.pointer, &finalBlock, &length), "AES-GCM finalization failed")
        var tag = [UInt8](repeating: 0, count: tagByteCount)
        try OpenSSL.check(
            EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_GCM_GET_TAG, Int32(tagByteCount), &tag), "AES-GCM tag failed")
        return nonce + ciphertext + tag
    }

    /// Decrypts `nonce ‖ ciphertext ‖ tag` made by ``seal(_:key:nonce:authenticating:)``.
    ///
    /// - Throws: `.security` when the input is too short, the tag does not match, or the key or
    ///   `aad` differ from those used to seal; `.invalidInput` for a wrong key length.
    public static func open(_ combined: [UInt8], key: [UInt8], authenticating aad: [UInt8] = []) throws -> [UInt8] {
        try Opener(key: key).open(combined, authenticating: aad)
    }

    /// Opens many values sealed under one key, setting the key up once: ``AESGCM/open(_:key:authenticating:)``
    /// builds a cipher context and expands the key for every value, which was most of what
    /// opening a record's note cost (issue 28, twelfth round); an opener does that once and then
    /// sets only each value's nonce. Same checks and errors as `open`. Not for use by two
    /// threads at once (it holds one OpenSSL context); make one per reading thread or read.
    public final class Opener {
        private let key: [UInt8]
        private let context: CipherContext
        /// Whether the context holds the cipher and key (false after a failed value, so the
        /// next one starts from a fresh set-up rather than from whatever state the failure left).
        private var keyed = false

        /// An opener for values sealed under `key` (32 bytes; `.invalidInput` otherwise).
        public init(key: [UInt8]) throws {
            try AESGCM.checkKey(key)
            self.key = key
            context = try CipherContext()
        }

        /// ``AESGCM/open(_:key:authenticating:)`` under this opener's key.
        public func open(_ combined: [UInt8], authenticating aad: [UInt8] = []) throws -> [UInt8] {
            guard combined.count >= nonceByteCount + tagByteCount else {
                throw CohortError(.security, "encrypted value is truncated", hint: "the stored value is damaged or not AES-GCM sealed")
            }
            guard combined.count <= Int(Int32.max), aad.count <= Int(Int32.max) else {
                throw CohortError(.invalidInput, "value is too large to decrypt in one piece")
            }
            if !keyed {
                try OpenSSL.check(EVP_DecryptInit_ex(context.pointer, EVP_aes_256_gcm(), nil, key, nil), "AES-GCM key setup failed")
                keyed = true
            }
            do {
                return try combined.withUnsafeBufferPointer { sealed in try open(sealed.baseAddress!, count: sealed.count, aad: aad) }
            } catch {
                keyed = false
                throw error
            }
        }

        /// Opens the `count` bytes at `sealed` (`nonce ‖ ciphertext ‖ tag`) on the keyed context.
        private func open(_ sealed: UnsafePointer<UInt8>, count: Int, aad: [UInt8]) throws -> [UInt8] {
            let ciphertextCount = count - nonceByteCount - tagByteCount
            try OpenSSL.check(EVP_DecryptInit_ex(context.pointer, nil, nil, nil, sealed), "AES-GCM nonce setup failed")
            var length: Int32 = 0
            if !aad.isEmpty {
                try OpenSSL.check(
                    EVP_DecryptUpdate(context.pointer, nil, &length, aad, Int32(aad.count)), "AES-GCM failed on the additional data")
            }
            var plaintext = [UInt8](repeating: 0, count: ciphertextCount)
            if ciphertextCount > 0 {
                try OpenSSL.check(
                    EVP_DecryptUpdate(context.pointer, &plaintext, &length, sealed + nonceByteCount, Int32(ciphertextCount)),
                    "AES-GCM decryption failed")
            }
            // OpenSSL copies the tag in; it does not write through the pointer.
            let tag = UnsafeMutableRawPointer(mutating: sealed + nonceByteCount + ciphertextCount)
            try OpenSSL.check(EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_GCM_SET_TAG, Int32(tagByteCount), tag), "AES-GCM tag setup failed")
            let finished = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { finalBlock in
                EVP_DecryptFinal_ex(context.pointer, finalBlock.baseAddress, &length)
            }
            guard finished == 1 else {
                _ = OpenSSL.drainErrors()
                OPENSSL_cleanse(&plaintext, plaintext.count)
                throw CohortError(
                    .security, "encrypted value failed authentication",
                    hint: "the value was altered, or the key or associated data differ from those used to encrypt it")
            }
            return plaintext
        }
    }

    fileprivate static func checkKey(_ key: [UInt8]) throws {
        guard key.count == keyByteCount else {
            throw CohortError(.invalidInput, "AES-256-GCM key must be \(keyByteCount) bytes", hint: "use the keystore's pii.key")
        }
    }
}
