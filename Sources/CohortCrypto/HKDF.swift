import COpenSSL
import CohortCore

/// HKDF-SHA256 key derivation (RFC 5869), through OpenSSL's `EVP_KDF` "HKDF".
public enum HKDF {
    /// The largest output RFC 5869 allows for SHA-256 (255 × 32 bytes).
    public static let maximumOutputByteCount = 255 * SHA256.byteCount

    /// Derives `outputByteCount` bytes from `inputKeyMaterial` (extract-then-expand).
    ///
    /// - Throws: `.invalidInput` when `outputByteCount` is not in `1...8160`; `.system` when
    ///   OpenSSL fails.
    public static func deriveKey(
        inputKeyMaterial: [UInt8], salt: [UInt8], info: [UInt8], outputByteCount: Int
    ) throws -> [UInt8] {
        guard (1...maximumOutputByteCount).contains(outputByteCount) else {
            throw CohortError(
                .invalidInput, "HKDF output length is out of range",
                hint: "ask for 1 to \(maximumOutputByteCount) bytes")
        }
        let context = try KDFContext(algorithm: "HKDF")
        let params = OSSLParameterList()
        params.addUTF8String(key: "digest", value: "SHA256")
        params.addOctetString(key: "key", value: inputKeyMaterial)
        params.addOctetString(key: "salt", value: salt)
        params.addOctetString(key: "info", value: info)
        var output = [UInt8](repeating: 0, count: outputByteCount)
        let result = params.withParameters { parameters in
            output.withUnsafeMutableBufferPointer { out in
                EVP_KDF_derive(context.pointer, out.baseAddress, out.count, parameters)
            }
        }
        try OpenSSL.check(result, "HKDF derivation failed")
        return output
    }
}

/// Owns an `EVP_KDF_CTX` (and the fetched `EVP_KDF`).
final class KDFContext {
    let pointer: OpaquePointer

    init(algorithm: String) throws {
        guard let kdf = EVP_KDF_fetch(nil, algorithm, nil) else {
            throw OpenSSL.systemError("OpenSSL does not provide the \(algorithm) key derivation")
        }
        defer { EVP_KDF_free(kdf) }
        guard let context = EVP_KDF_CTX_new(kdf) else {
            throw OpenSSL.systemError("could not create a key-derivation context")
        }
        pointer = context
    }

    deinit {
        EVP_KDF_CTX_free(pointer)
    }
}

/// An `OSSL_PARAM` array whose keys and values live in memory this object owns, so the
/// pointers OpenSSL keeps inside the array stay valid for as long as the list exists.
/// All owned memory is cleansed before it is released (values may be key material).
final class OSSLParameterList {
    private var buffers: [UnsafeMutableRawBufferPointer] = []
    private var parameters: [OSSL_PARAM] = []

    deinit {
        for buffer in buffers {
            if let base = buffer.baseAddress { OPENSSL_cleanse(base, buffer.count) }
            buffer.deallocate()
        }
    }

    /// Copies `bytes` into owned memory followed by `terminator` extra zero bytes.
    private func copy<C: Collection<UInt8>>(_ bytes: C, zeroBytesAfter terminator: Int) -> UnsafeMutableRawBufferPointer {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count + terminator, 1), alignment: 1)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        buffer.copyBytes(from: bytes)
        buffers.append(buffer)
        return buffer
    }

    private func cString(_ text: String) -> UnsafeMutablePointer<CChar>? {
        copy(text.utf8, zeroBytesAfter: 1).baseAddress?.assumingMemoryBound(to: CChar.self)
    }

    /// Adds a UTF-8 string parameter (e.g. a digest name).
    func addUTF8String(key: String, value: String) {
        parameters.append(OSSL_PARAM_construct_utf8_string(cString(key), cString(value), 0))
    }

    /// Adds an octet-string parameter.
    func addOctetString(key: String, value: [UInt8]) {
        let buffer = copy(value, zeroBytesAfter: 0)
        parameters.append(OSSL_PARAM_construct_octet_string(cString(key), buffer.baseAddress, value.count))
    }

    /// Calls `body` with the `OSSL_PARAM_END`-terminated array.
    func withParameters<R>(_ body: (UnsafePointer<OSSL_PARAM>?) throws -> R) rethrows -> R {
        var terminated = parameters
        terminated.append(OSSL_PARAM_construct_end())
        return try terminated.withUnsafeBufferPointer { try body($0.baseAddress) }
    }
}
