public import Foundation
import CZlib
import CohortCore
import CohortIO

/// A streaming gzip (RFC 1952) decompressor over zlib.
///
/// Design: the reader *pulls* compressed bytes from a `source` closure (which fills a buffer
/// and returns how many bytes it wrote, 0 at end of input) and hands out decompressed bytes
/// through ``read(into:)`` / ``read(maxLength:)``, which return 0 / empty only at the end of the
/// stream. Memory stays bounded by the two 64 KiB buffers whatever the archive size.
///
/// Every member's CRC-32 and length trailer is checked (by zlib) before its end is reported.
/// Concatenated members are read in turn, as `gzip -d` does. Anything else is an `.integrity`
/// error: corrupt deflate data, a checksum or length mismatch, input that ends mid-member,
/// an empty input, or bytes after the last member that are not another gzip member.
/// Not `Sendable`: one reader per task.
public final class GzipReader {
    private enum State {
        case betweenMembers(seenMember: Bool)
        case inMember
        case finished
    }

    private let stream: UnsafeMutablePointer<z_stream>
    private let input: UnsafeMutableRawBufferPointer
    private let source: (UnsafeMutableRawBufferPointer) throws -> Int
    private var state = State.betweenMembers(seenMember: false)
    /// Names the input in errors (a file path, or nil for in-memory data).
    private let inputName: String?

    /// A reader pulling compressed bytes from `source`.
    ///
    /// - Parameters:
    ///   - source: fills the buffer it is given with up to `buffer.count` bytes and returns the
    ///     count; returning 0 means the input has ended. Errors it throws propagate.
    ///   - name: what to call the input in error locations (e.g. the archive path).
    package init(name: String? = nil, source: @escaping (UnsafeMutableRawBufferPointer) throws -> Int) throws {
        stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        input = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        self.source = source
        self.inputName = name
        // 16 + MAX_WBITS: expect (only) a gzip wrapper; zlib parses the header and checks the trailer.
        let result = inflateInit2_(stream, 16 + MAX_WBITS, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard result == Z_OK else {
            throw CohortError(.system, "zlib could not start decompressing", underlying: zlibMessage(result))
        }
    }

    /// A reader over gzip data held in memory.
    public convenience init(bytes: [UInt8]) throws {
        var offset = 0
        try self.init { buffer in
            let count = min(buffer.count, bytes.count - offset)
            guard count > 0 else { return 0 }
            bytes.withUnsafeBytes { all in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: all[offset..<(offset + count)]))
            }
            offset += count
            return count
        }
    }

    /// A reader over the gzip file at `url`.
    ///
    /// - Throws: `.notFound` when the file does not exist; `.system` when it cannot be opened.
    public convenience init(contentsOf url: URL) throws {
        let file = try ReadableFile(path: url.path)
        try self.init(name: url.path) { buffer in try file.read(into: buffer) }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        input.deallocate()
    }

    /// Decompresses up to `buffer.count` bytes into `buffer`.
    ///
    /// - Returns: the number of bytes written; 0 only at the end of the stream (or for an empty
    ///   `buffer`).
    /// - Throws: `.integrity` for corrupt, truncated, or trailing data; errors from `source`.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        var produced = 0
        // avail_out is 32-bit.
        let capacity = min(buffer.count, 1 << 30)
        while produced == 0 {
            switch state {
            case .finished:
                return 0
            case .betweenMembers(let seenMember):
                if stream.pointee.avail_in == 0 { try refill() }
                if stream.pointee.avail_in == 0 {
                    guard seenMember else { throw integrityError("gzip input is empty") }
                    state = .finished
                    return 0
                }
                if seenMember {
                    guard inflateReset(stream) == Z_OK else {
                        throw CohortError(.system, "zlib could not start the next gzip member")
                    }
                }
                state = .inMember
            case .inMember:
                if stream.pointee.avail_in == 0 {
                    try refill()
                    if stream.pointee.avail_in == 0 {
                        throw integrityError("gzip stream is truncated")
                    }
                }
                stream.pointee.next_out = base.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(capacity)
                let result = inflate(stream, Z_NO_FLUSH)
                produced = capacity - Int(stream.pointee.avail_out)
                switch result {
                case Z_OK, Z_BUF_ERROR:
                    break
                case Z_STREAM_END:
                    state = .betweenMembers(seenMember: true)
                case Z_MEM_ERROR:
                    throw CohortError(.system, "zlib ran out of memory while decompressing")
                default:
                    let detail = stream.pointee.msg.map { String(cString: $0) } ?? zlibMessage(result)
                    state = .finished
                    throw integrityError("gzip data is corrupt", underlying: detail)
                }
            }
        }
        return produced
    }

    /// Decompresses up to `maxLength` bytes; an empty array means the end of the stream.
    public func read(maxLength: Int = 64 * 1024) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: max(maxLength, 1))
        let count = try bytes.withUnsafeMutableBytes { try read(into: $0) }
        bytes.removeSubrange(count...)
        return bytes
    }

    /// Decompresses everything that remains. Use only for data known to be small.
    public func readAll() throws -> [UInt8] {
        var result: [UInt8] = []
        while true {
            let chunk = try read()
            if chunk.isEmpty { return result }
            result.append(contentsOf: chunk)
        }
    }

    /// Decompresses gzip data held in memory.
    public static func decompress(_ bytes: [UInt8]) throws -> [UInt8] {
        try GzipReader(bytes: bytes).readAll()
    }

    private func refill() throws {
        let count = try source(input)
        guard count >= 0, count <= input.count else {
            throw CohortError(.system, "gzip input source returned an invalid byte count")
        }
        stream.pointee.next_in = input.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_in = uInt(count)
    }

    private func integrityError(_ message: String, underlying: String? = nil) -> CohortError {
        CohortError(
            .integrity, message, at: inputName.map { CohortError.Location(file: $0) },
            hint: "the archive is damaged or incomplete; copy it again from the original", underlying: underlying)
    }
}
