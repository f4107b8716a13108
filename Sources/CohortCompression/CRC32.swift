import CZlib

/// CRC-32 (ISO 3309 / ITU-T V.42, the gzip and zip checksum), through zlib.
public enum CRC32 {
    /// The CRC-32 of `bytes`, continuing from `initial` (the checksum of the bytes before them;
    /// 0 to start).
    package static func checksum(_ bytes: UnsafeRawBufferPointer, initial: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return initial }
        let result = crc32_z(UInt(initial), base.assumingMemoryBound(to: Bytef.self), bytes.count)
        return UInt32(truncatingIfNeeded: result)
    }

    /// The CRC-32 of `bytes`, continuing from `initial`.
    public static func checksum(_ bytes: [UInt8], initial: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, initial: initial) }
    }
}
