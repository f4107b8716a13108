import COpenSSL

/// Whether `a` and `b` are equal, in time that depends only on their lengths.
///
/// Use for comparing MACs, tags, and token hashes, where an early-exit comparison would leak
/// how many leading bytes match. Lengths are compared first (lengths are not secret).
public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    guard !a.isEmpty else { return true }
    return a.withUnsafeBytes { left in
        b.withUnsafeBytes { right in
            CRYPTO_memcmp(left.baseAddress, right.baseAddress, left.count) == 0
        }
    }
}
