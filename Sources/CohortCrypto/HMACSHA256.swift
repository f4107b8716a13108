import COpenSSL

/// HMAC-SHA256 (RFC 2104) message authentication, through OpenSSL.
public enum HMACSHA256 {
    /// The authentication code length in bytes.
    public static let byteCount = 32

    /// The 32-byte HMAC-SHA256 of `message` under `key` (any length, including empty).
    public static func authenticationCode(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var code = [UInt8](repeating: 0, count: byteCount)
        var length: UInt32 = 0
        let result = withNonNullBytes(key) { keyPointer, keyCount in
            withNonNullBytes(message) { messagePointer, messageCount in
                code.withUnsafeMutableBufferPointer { out in
                    HMAC(EVP_sha256(), keyPointer, Int32(keyCount), messagePointer, messageCount, out.baseAddress, &length)
                }
            }
        }
        // HMAC() fails only when memory is exhausted.
        OpenSSL.require(result != nil && Int(length) == byteCount, "HMAC-SHA256 failed")
        return code
    }
}
