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
