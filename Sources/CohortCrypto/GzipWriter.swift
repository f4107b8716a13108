import CZlib
import CohortCore

/// A streaming, reproducible gzip (RFC 1952) compressor over zlib.
///
/// The gzip header is written here rather than by zlib so that it is fixed: no file name,
/// `MTIME = 0`, `OS = 255` (unknown), `XFL` from the level. The same input and level therefore
/// always give byte-identical output, whatever the machine or clock — what a reproducible export
/// archive needs. Input is staged into fixed 128 KiB blocks before it reaches zlib, so how the
/// caller splits its writes does not change the output either (it would at level 0 otherwise). The body is raw deflate; the trailer is CRC-32 and length mod 2³², both
/// little-endian. `gzip -t` / `gzip -d` read the result.
///
/// Compressed bytes go to `sink` as they are produced (copy them: the buffer is reused).
/// Call ``finish()`` exactly once at the end; a writer that is never finished has produced an
/// incomplete stream. Not `Sendable`: one writer per task.
public final class GzipWriter {
    private let stream: UnsafeMutablePointer<z_stream>
    private let output: UnsafeMutableRawBufferPointer
    /// Input waiting to be compressed; handed to zlib only when full (or at `finish`).
    private let staging: UnsafeMutableRawBufferPointer
    private var staged = 0
    private let sink: (UnsafeRawBufferPointer) throws -> Void
    private var crc: UInt32 = 0
    private var inputSize: UInt32 = 0
    private var finished = false
    private var failed = false

    /// Starts a gzip stream and immediately writes its 10-byte header to `sink`.
    ///
    /// - Parameters:
    ///   - level: zlib compression level, 0 (store) to 9 (smallest); 6 is gzip's default.
    ///   - sink: receives the compressed bytes in order; errors it throws propagate.
    /// - Throws: `.invalidInput` for a level outside 0...9; `.system` when zlib cannot start.
    public init(level: Int = 6, sink: @escaping (UnsafeRawBufferPointer) throws -> Void) throws {
        guard (0...9).contains(level) else {
            throw CohortError(.invalidInput, "gzip level must be between 0 and 9")
        }
        stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        output = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        staging = UnsafeMutableRawBufferPointer.allocate(byteCount: 128 * 1024, alignment: 16)
        self.sink = sink
        // Negative window bits: raw deflate, no zlib or gzip wrapper (we write our own).
        let result = deflateInit2_(
            stream, Int32(level), Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
            Int32(MemoryLayout<z_stream>.size))
        guard result == Z_OK else {
            failed = true
            throw CohortError(.system, "zlib could not start compressing", underlying: zlibMessage(result))
        }
        // XFL: 2 = maximum compression, 4 = fastest, as gzip(1) sets it.
        let extraFlags: UInt8 = level == 9 ? 2 : (level == 1 ? 4 : 0)
        let header: [UInt8] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, extraFlags, 255]
        try header.withUnsafeBytes { try sink($0) }
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        output.deallocate()
        staging.deallocate()
    }

    /// Compresses the bytes in `bytes`.
    ///
    /// - Throws: `.invalidInput` after ``finish()``; `.system` when zlib fails; whatever `sink`
    ///   throws.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        try checkWritable()
        guard bytes.count > 0 else { return }
        crc = CRC32.checksum(bytes, initial: crc)
        inputSize = inputSize &+ UInt32(truncatingIfNeeded: bytes.count)
        var offset = 0
        while offset < bytes.count {
            let count = min(bytes.count - offset, staging.count - staged)
            UnsafeMutableRawBufferPointer(rebasing: staging[staged..<(staged + count)])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)]))
            staged += count
            offset += count
            if staged == staging.count { try compressStaged(flush: Z_NO_FLUSH) }
        }
    }

    /// Compresses `bytes`.
    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Flushes the remaining compressed data and writes the CRC-32 and length trailer.
    ///
    /// - Throws: `.invalidInput` when called twice; `.system` when zlib fails; whatever `sink`
    ///   throws.
    public func finish() throws {
        try checkWritable()
        try compressStaged(flush: Z_FINISH)
        finished = true
        var trailer = [UInt8]()
        trailer.reserveCapacity(8)
        for value in [crc, inputSize] {
            for shift in stride(from: 0, to: 32, by: 8) { trailer.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
        }
        try trailer.withUnsafeBytes { try sink($0) }
    }

    private func checkWritable() throws {
        guard !finished else { throw CohortError(.invalidInput, "gzip stream is already finished") }
        guard !failed else { throw CohortError(.system, "gzip stream failed earlier and cannot continue") }
    }

    /// Hands the staged input to zlib and empties the staging buffer.
    private func compressStaged(flush: Int32) throws {
        stream.pointee.next_in = staging.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_in = uInt(staged)
        try pump(flush: flush)
        staged = 0
    }

    /// Runs deflate until it has consumed all input (or, for `Z_FINISH`, ended the stream),
    /// handing each full or final output buffer to the sink.
    private func pump(flush: Int32) throws {
        do {
            while true {
                stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(output.count)
                let result = deflate(stream, flush)
                guard result == Z_OK || result == Z_STREAM_END || result == Z_BUF_ERROR else {
                    throw CohortError(.system, "zlib compression failed", underlying: zlibMessage(result))
                }
                let produced = output.count - Int(stream.pointee.avail_out)
                if produced > 0 { try sink(UnsafeRawBufferPointer(rebasing: output[0..<produced])) }
                if flush == Z_FINISH {
                    if result == Z_STREAM_END { return }
                } else if stream.pointee.avail_in == 0 && stream.pointee.avail_out > 0 {
                    return
                }
            }
        } catch {
            failed = true
            throw error
        }
    }

    /// Gzip-compresses `bytes` in one call.
    public static func compress(_ bytes: [UInt8], level: Int = 6) throws -> [UInt8] {
        var result: [UInt8] = []
        let writer = try GzipWriter(level: level) { result.append(contentsOf: $0) }
        try writer.write(bytes)
        try writer.finish()
        return result
    }
}

/// zlib's description of a failed call.
func zlibMessage(_ code: Int32) -> String {
    switch code {
    case Z_DATA_ERROR: "invalid or corrupt deflate data"
    case Z_MEM_ERROR: "out of memory"
    case Z_BUF_ERROR: "no progress possible"
    case Z_STREAM_ERROR: "inconsistent stream state"
    case Z_VERSION_ERROR: "incompatible zlib version"
    case Z_NEED_DICT: "a preset dictionary is required"
    default: "zlib error \(code)"
    }
}
