public import Foundation
import COpenSSL

/// SHA-256 (FIPS 180-4) one-shot hashing, through OpenSSL.
///
/// For data that arrives in pieces (files, record streams) use ``SHA256Hasher``.
public enum SHA256 {
    /// The digest length in bytes.
    public static let byteCount = 32

    /// The 32-byte SHA-256 digest of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { hash($0) }
    }

    /// The 32-byte SHA-256 digest of `data`.
    public static func hash(_ data: Data) -> [UInt8] {
        data.withUnsafeBytes { hash($0) }
    }

    /// The 32-byte SHA-256 digest of the bytes in `buffer`.
    package static func hash(_ buffer: UnsafeRawBufferPointer) -> [UInt8] {
        let hasher = SHA256Hasher()
        hasher.update(buffer)
        return hasher.finalize()
    }

    /// The 32-byte SHA-256 digest of any byte sequence (e.g. `text.utf8`).
    public static func hash<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> [UInt8] {
        let hasher = SHA256Hasher()
        let contiguous: Void? = bytes.withContiguousStorageIfAvailable { hasher.update(UnsafeRawBufferPointer($0)) }
        if contiguous == nil { hasher.update(Array(bytes)) }
        return hasher.finalize()
    }

    /// The SHA-256 digest of any byte sequence as 64 lowercase hexadecimal characters.
    public static func hex<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        Hex.encode(hash(bytes))
    }

    /// The SHA-256 digest of `bytes` as 64 lowercase hexadecimal characters.
    public static func hex(_ bytes: [UInt8]) -> String {
        Hex.encode(hash(bytes))
    }

    /// The SHA-256 digest of `data` as 64 lowercase hexadecimal characters.
    public static func hex(_ data: Data) -> String {
        Hex.encode(hash(data))
    }
}
