import CohortCore
import CZlib
import Foundation

/// A zip archive read in place: its central directory is parsed once and members are streamed
/// through zlib's raw inflate in 256 KiB chunks, so a multi-GB member never touches the disk
/// and memory stays flat.
///
/// Written by hand rather than taken from ZIPFoundation: cohort needs only reading, stored and
/// deflated members and zip64 (Apple's exports pass 4 GiB uncompressed); zlib is already linked,
/// and ~250 lines keep every error in cohort's form (file, member, what to do) without a new
/// dependency. Each member's CRC-32 and sizes are checked at its end, so a truncated or damaged
/// archive is an error, never a silently shorter import.
///
/// Not `Sendable`: one reader per thread.
package final class ZipArchive {
    /// One member, as the central directory describes it.
    package struct Entry: Sendable, Hashable {
        /// The member's path inside the archive (`apple_health_export/export.xml`).
        public var path: String
        /// 0 = stored, 8 = deflated.
        package var method: UInt16
        package var crc32: UInt32
        package var compressedSize: UInt64
        package var uncompressedSize: UInt64
        /// Where the member's local header starts.
        package var localHeaderOffset: UInt64
        /// Whether the path names a directory.
        public var isDirectory: Bool { path.hasSuffix("/") }
    }

    /// The archive's path (for errors).
    public let path: String
    /// The members, in central-directory order.
    public let entries: [Entry]
    private let fd: Int32
    private let size: UInt64

    /// Opens `path` and reads its central directory.
    package init(path: String) throws {
        self.path = path
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw CohortError(.notFound, "cannot open the zip archive", at: .init(file: path), hint: "check the path") }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            close(fd)
            throw CohortError(.system, "cannot read the zip archive's size", at: .init(file: path))
        }
        self.fd = fd
        self.size = UInt64(info.st_size)
        do {
            self.entries = try Self.readDirectory(fd: fd, size: UInt64(info.st_size), path: path)
        } catch {
            close(fd)
            throw error
        }
    }

    deinit { close(fd) }

    static func truncated(_ path: String, _ what: String) -> CohortError {
        CohortError(.invalidInput, "the zip archive is truncated or damaged: \(what)", at: .init(file: path),
            hint: "copy or download the export again (the Health app's \"Export All Health Data\" writes export.zip)")
    }

    private static func readExactly(fd: Int32, offset: UInt64, count: Int, path: String) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { buffer in
                pread(fd, buffer.baseAddress.map { $0 + done }, count - done, off_t(offset) + off_t(done))
            }
            guard n > 0 else { throw truncated(path, "it ends before the data its directory describes") }
            done += n
        }
        return bytes
    }

    private static func u16(_ b: [UInt8], _ i: Int) -> UInt16 { UInt16(b[i]) | UInt16(b[i + 1]) << 8 }
    private static func u32(_ b: [UInt8], _ i: Int) -> UInt32 { UInt32(u16(b, i)) | UInt32(u16(b, i + 2)) << 16 }
    private static func u64(_ b: [UInt8], _ i: Int) -> UInt64 { UInt64(u32(b, i)) | UInt64(u32(b, i + 4)) << 32 }

    static func readDirectory(fd: Int32, size: UInt64, path: String) throws -> [Entry] {
        // The end-of-central-directory record (22 bytes + a comment of up to 64 KiB) is at the end.
        guard size >= 22 else { throw truncated(path, "it is too short to be a zip archive") }
        let tailCount = Int(min(size, 22 + 65_535 + 20))
        let tailStart = size - UInt64(tailCount)
        let tail = try readExactly(fd: fd, offset: tailStart, count: tailCount, path: path)
        var eocd = -1
        var i = tailCount - 22
        while i >= 0 {
            if tail[i] == 0x50, tail[i + 1] == 0x4B, tail[i + 2] == 0x05, tail[i + 3] == 0x06 {
                eocd = i
                break
            }
            i -= 1
        }
        guard eocd >= 0 else { throw truncated(path, "no end-of-central-directory record (the file was cut short, or is not a zip)") }
        var count = UInt64(u16(tail, eocd + 10))
        var directorySize = UInt64(u32(tail, eocd + 12))
        var directoryOffset = UInt64(u32(tail, eocd + 16))
        // zip64: the locator sits just before the classic record and points at the zip64 record.
        if eocd >= 20, u32(tail, eocd - 20) == 0x0706_4B50 {
            let recordOffset = u64(tail, eocd - 20 + 8)
            guard recordOffset + 56 <= size else { throw truncated(path, "the zip64 directory record is missing") }
            let record = try readExactly(fd: fd, offset: recordOffset, count: 56, path: path)
            guard u32(record, 0) == 0x0606_4B50 else { throw truncated(path, "the zip64 directory record is missing") }
            count = u64(record, 32)
            directorySize = u64(record, 40)
            directoryOffset = u64(record, 48)
        }
        guard directoryOffset + directorySize <= size, directorySize < 1 << 31 else {
            throw truncated(path, "the central directory lies outside the file")
        }
        let directory = try readExactly(fd: fd, offset: directoryOffset, count: Int(directorySize), path: path)
        var entries: [Entry] = []
        entries.reserveCapacity(Int(min(count, 1 << 20)))
        var p = 0
        for _ in 0..<count {
            guard p + 46 <= directory.count, u32(directory, p) == 0x0201_4B50 else {
                throw truncated(path, "a central directory entry is damaged")
            }
            let nameLength = Int(u16(directory, p + 28))
            let extraLength = Int(u16(directory, p + 30))
            let commentLength = Int(u16(directory, p + 32))
            guard p + 46 + nameLength + extraLength + commentLength <= directory.count else {
                throw truncated(path, "a central directory entry is damaged")
            }
            var entry = Entry(
                path: String(decoding: directory[(p + 46)..<(p + 46 + nameLength)], as: UTF8.self), method: u16(directory, p + 10),
                crc32: u32(directory, p + 16), compressedSize: UInt64(u32(directory, p + 20)), uncompressedSize: UInt64(u32(directory, p + 24)),
                localHeaderOffset: UInt64(u32(directory, p + 42)))
            // The zip64 extra field holds, in order, whichever of the three sizes are 0xFFFFFFFF.
            var e = p + 46 + nameLength
            let extraEnd = e + extraLength
            while e + 4 <= extraEnd {
                let id = u16(directory, e)
                let length = Int(u16(directory, e + 2))
                var f = e + 4
                if id == 0x0001 {
                    if entry.uncompressedSize == 0xFFFF_FFFF, f + 8 <= e + 4 + length { entry.uncompressedSize = u64(directory, f); f += 8 }
                    if entry.compressedSize == 0xFFFF_FFFF, f + 8 <= e + 4 + length { entry.compressedSize = u64(directory, f); f += 8 }
                    if entry.localHeaderOffset == 0xFFFF_FFFF, f + 8 <= e + 4 + length { entry.localHeaderOffset = u64(directory, f) }
                }
                e += 4 + length
            }
            entries.append(entry)
            p += 46 + nameLength + extraLength + commentLength
        }
        return entries
    }

    /// Streams `entry`'s uncompressed bytes to `body` in chunks of at most 256 KiB, then checks
    /// its CRC-32 and size.
    package func read(_ entry: Entry, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let member = "\(path)!\(entry.path)"
        guard entry.method == 0 || entry.method == 8 else {
            throw CohortError(.invalidInput, "the zip member uses compression method \(entry.method); only stored (0) and deflate (8) are read",
                at: .init(file: member), hint: "unpack the archive and import its folder instead")
        }
        let header = try Self.readExactly(fd: fd, offset: entry.localHeaderOffset, count: 30, path: path)
        guard Self.u32(header, 0) == 0x0403_4B50 else { throw Self.truncated(path, "a member's local header is damaged") }
        let dataStart = entry.localHeaderOffset + 30 + UInt64(Self.u16(header, 26)) + UInt64(Self.u16(header, 28))
        guard dataStart + entry.compressedSize <= size else { throw Self.truncated(path, "a member's data runs past the end of the file") }
        let chunk = 256 * 1024
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer {
            input.deallocate()
            output.deallocate()
        }
        var crc = crc32(0, nil, 0)
        var produced: UInt64 = 0
        var offset = dataStart
        let end = dataStart + entry.compressedSize
        func emit(_ bytes: UnsafeRawBufferPointer) throws {
            guard !bytes.isEmpty else { return }
            crc = crc32(crc, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), uInt(bytes.count))
            produced += UInt64(bytes.count)
            try body(bytes)
        }
        func fill() throws -> Int {
            let want = Int(min(UInt64(chunk), end - offset))
            guard want > 0 else { return 0 }
            let n = pread(fd, input.baseAddress, want, off_t(offset))
            guard n > 0 else { throw Self.truncated(path, "a member's data runs past the end of the file") }
            offset += UInt64(n)
            return n
        }
        if entry.method == 0 {
            while offset < end {
                let n = try fill()
                try emit(UnsafeRawBufferPointer(rebasing: input[0..<n]))
            }
        } else {
            var stream = z_stream()
            guard inflateInit2_(&stream, -MAX_WBITS, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
                throw CohortError(.system, "zlib could not start decompressing", at: .init(file: member))
            }
            defer { inflateEnd(&stream) }
            var finished = false
            while !finished {
                if stream.avail_in == 0 {
                    let n = try fill()
                    guard n > 0 else { throw Self.truncated(path, "a member's compressed data ends early") }
                    stream.next_in = input.baseAddress?.assumingMemoryBound(to: Bytef.self)
                    stream.avail_in = uInt(n)
                }
                repeat {
                    stream.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
                    stream.avail_out = uInt(chunk)
                    let status = inflate(&stream, Z_NO_FLUSH)
                    switch status {
                    case Z_OK, Z_BUF_ERROR: break
                    case Z_STREAM_END: finished = true
                    default: throw Self.truncated(path, "a member's compressed data is corrupt (zlib status \(status))")
                    }
                    try emit(UnsafeRawBufferPointer(rebasing: output[0..<(chunk - Int(stream.avail_out))]))
                } while stream.avail_out == 0 && !finished
            }
        }
        guard produced == entry.uncompressedSize, UInt32(crc) == entry.crc32 else {
            throw Self.truncated(path, "a member's checksum or size does not match its directory entry")
        }
    }
}
