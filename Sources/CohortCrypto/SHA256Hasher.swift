public import Foundation
import COpenSSL
import CohortCore

/// An incremental SHA-256 computation over an OpenSSL `EVP_MD_CTX`.
///
/// Feed bytes with `update` as they arrive, then call ``finalize()``. Finalizing resets the
/// hasher, so one instance can hash several inputs in turn. Not `Sendable`: use one per task.
public final class SHA256Hasher {
    private let context: OpaquePointer

    /// Starts an empty SHA-256 computation.
    public init() {
        // Allocation is the only way this fails; like Swift's own allocations, that traps.
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("EVP_MD_CTX_new failed (out of memory)") }
        self.context = context
        Self.start(self.context)
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    private static func start(_ context: OpaquePointer) {
        let ok = EVP_DigestInit_ex(context, EVP_sha256(), nil)
        OpenSSL.require(ok == 1, "EVP_DigestInit_ex(SHA-256) failed")
    }

    /// Adds the bytes in `buffer` to the hash.
    package func update(_ buffer: UnsafeRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        let ok = EVP_DigestUpdate(context, base, buffer.count)
        OpenSSL.require(ok == 1, "EVP_DigestUpdate failed")
    }

    /// Adds `bytes` to the hash.
    public func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Adds `data` to the hash.
    public func update(_ data: Data) {
        data.withUnsafeBytes { update($0) }
    }

    /// Returns the 32-byte digest of everything added so far and resets the hasher.
    public func finalize() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: SHA256.byteCount)
        digest.withUnsafeMutableBytes { finalize(into: $0) }
        return digest
    }

    /// Writes the 32-byte digest of everything added so far into `digest` (at least that many
    /// bytes) and resets the hasher: ``finalize()`` without an array.
    package func finalize(into digest: UnsafeMutableRawBufferPointer) {
        precondition(digest.count >= SHA256.byteCount, "a SHA-256 digest needs 32 bytes")
        var length: UInt32 = 0
        let ok = EVP_DigestFinal_ex(context, digest.baseAddress?.assumingMemoryBound(to: UInt8.self), &length)
        OpenSSL.require(ok == 1 && Int(length) == SHA256.byteCount, "EVP_DigestFinal_ex failed")
        // Restarted with the digest the context already holds: `EVP_sha256()` again would make
        // OpenSSL 3 look its implementation up (under a lock) on every restart.
        let restarted = EVP_DigestInit_ex2(context, nil, nil)
        OpenSSL.require(restarted == 1, "EVP_DigestInit_ex2(SHA-256) failed")
    }
}

extension SHA256Hasher {
    /// The lowercase hex SHA-256 and the size of the file at `path` — of its first `length` bytes
    /// when given — read in 1 MiB chunks.
    public static func digest(ofFile path: String, length: UInt64? = nil) throws -> (sha256: String, size: UInt64) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CohortError(.notFound, "cannot read the file", at: .init(file: path))
        }
        defer { try? handle.close() }
        let hasher = SHA256Hasher()
        var size: UInt64 = 0
        while size < length ?? .max, let chunk = try handle.read(upToCount: Int(min(1 << 20, (length ?? .max) - size))), !chunk.isEmpty {
            hasher.update(chunk)
            size += UInt64(chunk.count)
        }
        return (Hex.encode(hasher.finalize()), size)
    }
}
