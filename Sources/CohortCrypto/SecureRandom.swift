import COpenSSL
import CohortCore

/// Cryptographically secure random bytes from OpenSSL's DRBG (`RAND_bytes`).
public enum SecureRandom {
    /// `count` random bytes.
    ///
    /// - Throws: `.invalidInput` for a negative count; `.system` when the generator cannot be
    ///   seeded.
    public static func bytes(_ count: Int) throws -> [UInt8] {
        guard count >= 0, count <= Int(Int32.max) else {
            throw CohortError(.invalidInput, "random byte count is out of range")
        }
        var bytes = [UInt8](repeating: 0, count: count)
        guard count > 0 else { return bytes }
        let result = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        try OpenSSL.check(result, "the secure random generator failed")
        return bytes
    }
}
