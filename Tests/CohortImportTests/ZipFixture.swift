import CZlib
import Foundation

/// Writes zip archives for tests: stored or deflated members, optionally in zip64 form (every
/// size and offset moved to the zip64 extra field, and the zip64 end records written), so the
/// reader's zip64 path is exercised without a 4 GiB file.
struct ZipFixture {
    struct Member {
        var path: String
        var bytes: [UInt8]
        var deflate = true
    }

    static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
    static func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }
    static func le64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8((v >> (8 * UInt64($0))) & 0xFF) } }

    /// Raw deflate (no zlib header) of `bytes`.
    static func deflateRaw(_ bytes: [UInt8]) -> [UInt8] {
        var stream = z_stream()
        deflateInit2_(&stream, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))) + 64)
        var input = bytes
        let produced = input.withUnsafeMutableBufferPointer { inp in
            output.withUnsafeMutableBufferPointer { out in
                stream.next_in = inp.baseAddress
                stream.avail_in = uInt(inp.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                deflate(&stream, Z_FINISH)
                return out.count - Int(stream.avail_out)
            }
        }
        return Array(output[0..<produced])
    }

    static func make(_ members: [Member], zip64: Bool = false) -> [UInt8] {
        var archive: [UInt8] = []
        var central: [UInt8] = []
        for m in members {
            let data = m.deflate ? deflateRaw(m.bytes) : m.bytes
            let crc = m.bytes.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
            let name = Array(m.path.utf8)
            let offset = UInt64(archive.count)
            let method = m.deflate ? 8 : 0
            let extra64 = le16(1) + le16(24) + le64(UInt64(m.bytes.count)) + le64(UInt64(data.count)) + le64(offset)
            let localExtra = zip64 ? le16(1) + le16(16) + le64(UInt64(m.bytes.count)) + le64(UInt64(data.count)) : []
            archive += le32(0x0403_4B50) + le16(zip64 ? 45 : 20) + le16(0) + le16(method) + le16(0) + le16(0x21) + le32(crc)
            archive += zip64 ? le32(0xFFFF_FFFF) + le32(0xFFFF_FFFF) : le32(UInt32(data.count)) + le32(UInt32(m.bytes.count))
            archive += le16(name.count) + le16(localExtra.count) + name + localExtra + data
            central += le32(0x0201_4B50) + le16(zip64 ? 45 : 20) + le16(zip64 ? 45 : 20) + le16(0) + le16(method) + le16(0) + le16(0x21) + le32(crc)
            central += zip64 ? le32(0xFFFF_FFFF) + le32(0xFFFF_FFFF) : le32(UInt32(data.count)) + le32(UInt32(m.bytes.count))
            central += le16(name.count) + le16(zip64 ? extra64.count : 0) + le16(0) + le16(0) + le16(0) + le32(0)
            central += zip64 ? le32(0xFFFF_FFFF) : le32(UInt32(offset))
            central += name + (zip64 ? extra64 : [])
        }
        let directoryOffset = UInt64(archive.count)
        archive += central
        if zip64 {
            let recordOffset = UInt64(archive.count)
            archive += le32(0x0606_4B50) + le64(44) + le16(45) + le16(45) + le32(0) + le32(0)
            archive += le64(UInt64(members.count)) + le64(UInt64(members.count)) + le64(UInt64(central.count)) + le64(directoryOffset)
            archive += le32(0x0706_4B50) + le32(0) + le64(recordOffset) + le32(1)
            archive += le32(0x0605_4B50) + le16(0) + le16(0) + le16(0xFFFF) + le16(0xFFFF) + le32(0xFFFF_FFFF) + le32(0xFFFF_FFFF) + le16(0)
        } else {
            archive += le32(0x0605_4B50) + le16(0) + le16(0) + le16(members.count) + le16(members.count) + le32(UInt32(central.count))
            archive += le32(UInt32(directoryOffset)) + le16(0)
        }
        return archive
    }
}
