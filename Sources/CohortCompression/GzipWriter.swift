import CZlib
import CohortCore
import CohortIO
import Foundation

/// A streaming, reproducible gzip (RFC 1952) compressor over zlib that uses several cores.
///
/// The gzip header is written here rather than by zlib so that it is fixed: no file name,
/// `MTIME = 0`, `OS = 255` (unknown), `XFL` from the level. The trailer is CRC-32 and length
/// mod 2³², both little-endian. `gzip -t` / `gzip -d` read the result: one gzip member.
///
/// Like pigz, the input is cut into ``blockSize`` blocks at fixed byte offsets, and each block
/// is raw-deflated on its own (on worker threads), primed with the last 32 KiB of the previous
/// block as a dictionary so the ratio stays close to a single stream's. Every block but the
/// last ends with a sync flush (byte-aligned, not final), so the blocks' outputs concatenate
/// into one deflate stream. A block's output depends only on its bytes, its dictionary and the
/// level — not on the thread count, scheduling, or how the caller split its writes — so the same
/// input and level always give byte-identical output, which a reproducible export needs.
///
/// Compressed bytes go to `sink` in order, always on the calling thread, from within ``write(_:)``
/// and ``finish()`` (copy them: the buffer is reused). At most twice as many blocks as threads
/// are in flight; a write waits when they are all busy, so memory stays bounded. Call
/// ``finish()`` exactly once at the end; a writer that is never finished has produced an
/// incomplete stream. After any error the writer refuses further writes. Not `Sendable`: one
/// writer per task.
public final class GzipWriter {
    /// Bytes of input per independently compressed block (the last block may be shorter).
    public static let blockSize = 128 * 1024

    /// The thread count used when none is given: the cores this process may use
    /// (``Cores/available``), between 1 and 4.
    public static var defaultThreadCount: Int {
        min(Cores.available, 4)
    }

    /// More threads than this gain nothing and only cost memory.
    static let maximumThreadCount = 32

    private let level: Int
    private let threads: Int
    private let maximumInFlight: Int
    private let sink: (UnsafeRawBufferPointer) throws -> Void
    /// Compresses on the calling thread when there are no workers (one thread, or input that
    /// fits in a single block).
    private let engine: ParallelDeflateEngine
    /// Started with the first full block when `threads > 1`.
    private var pool: ParallelDeflatePool<ParallelDeflateBlock>?
    /// The block being filled by `write`.
    private var current = ParallelDeflateBlock(blockSize: GzipWriter.blockSize)
    /// Submitted blocks in stream order, not yet handed to the sink.
    private var inFlight: [ParallelDeflateBlock] = []
    /// Emitted blocks kept for reuse.
    private var spare: [ParallelDeflateBlock] = []
    private var crc: UInt32 = 0
    private var inputSize: UInt32 = 0
    private var finished = false
    private var failed = false

    /// Starts a gzip stream and immediately writes its 10-byte header to `sink`.
    ///
    /// - Parameters:
    ///   - level: zlib compression level, 0 (store) to 9 (smallest); 6 is gzip's default.
    ///   - threads: compression threads (1 compresses on the calling thread); the output is the
    ///     same for every value. Values above 32 are treated as 32.
    ///   - sink: receives the compressed bytes in order, on the calling thread; errors it throws
    ///     propagate unchanged.
    /// - Throws: `.invalidInput` for a level outside 0...9 or fewer than one thread; `.system`
    ///   when zlib cannot start.
    public init(
        level: Int = 6, threads: Int = GzipWriter.defaultThreadCount,
        sink: @escaping (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        guard (0...9).contains(level) else {
            throw CohortError(.invalidInput, "gzip level must be between 0 and 9")
        }
        guard threads >= 1 else {
            throw CohortError(.invalidInput, "gzip needs at least one compression thread")
        }
        self.level = level
        self.threads = min(threads, Self.maximumThreadCount)
        maximumInFlight = 2 * self.threads
        self.sink = sink
        engine = try ParallelDeflateEngine(level: level)
        // XFL: 2 = maximum compression, 4 = fastest, as gzip(1) sets it.
        let extraFlags: UInt8 = level == 9 ? 2 : (level == 1 ? 4 : 0)
        let header: [UInt8] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, extraFlags, 255]
        try header.withUnsafeBytes { try sink($0) }
    }

    deinit {
        pool?.stop()
    }

    /// Compresses the bytes in `bytes`.
    ///
    /// - Throws: `.invalidInput` after ``finish()``; `.system` when zlib fails or the writer
    ///   failed earlier; whatever `sink` throws.
    package func write(_ bytes: UnsafeRawBufferPointer) throws {
        try checkWritable()
        guard bytes.count > 0 else { return }
        inputSize = inputSize &+ UInt32(truncatingIfNeeded: bytes.count)
        do {
            var offset = 0
            while offset < bytes.count {
                let count = min(bytes.count - offset, Self.blockSize - current.count)
                UnsafeMutableRawBufferPointer(rebasing: current.input[current.count..<(current.count + count)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)]))
                current.count += count
                offset += count
                if current.count == Self.blockSize { try submitCurrent(isLast: false) }
            }
        } catch {
            fail()
            throw error
        }
    }

    /// Compresses `bytes`.
    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Puts `file`'s deflate bytes (``DeflateSpool``) into the stream as they are, as if its bytes
    /// had been written with ``write(_:)``: the block being filled is compressed and handed over
    /// first (it ends byte-aligned), then the spool's bytes go to the sink, and the CRC-32 and
    /// length take in the file's. The next block starts without a dictionary: the bytes just before
    /// it are the file's, which this writer did not see.
    ///
    /// - Throws: `.integrity` when the spool file is not the size it was recorded with; `.system`
    ///   for I/O failures, or when the writer failed earlier; whatever `sink` throws.
    package func writePrecompressed(_ file: DeflatedFile) throws {
        try checkWritable()
        do {
            if current.count > 0 { try submitCurrent(isLast: false) }
            try emitFinishedBlocks(keepingAtMost: 0)
            current.reset(after: nil)
            try copySpool(file)
            crc = UInt32(truncatingIfNeeded: crc32_combine(uLong(crc), uLong(file.crc), .init(file.size)))
            inputSize = inputSize &+ UInt32(truncatingIfNeeded: file.size)
        } catch {
            fail()
            throw error
        }
    }

    /// Hands the spool file's bytes to the sink, checking there are exactly as many as recorded.
    private func copySpool(_ file: DeflatedFile) throws {
        let spool = try ReadableFile(path: file.spoolPath)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer { buffer.deallocate() }
        var copied: UInt64 = 0
        while true {
            let count = try spool.read(into: buffer)
            if count == 0 { break }
            try sink(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            copied += UInt64(count)
        }
        guard copied == file.compressedSize else {
            throw CohortError(.integrity, "a compression spool file changed before it was archived", at: .init(file: file.spoolPath), hint: "run the export again")
        }
    }

    /// Compresses the remaining input, hands all output to the sink, and writes the CRC-32 and
    /// length trailer.
    ///
    /// - Throws: `.invalidInput` when called twice; `.system` when zlib fails or the writer
    ///   failed earlier; whatever `sink` throws.
    public func finish() throws {
        try checkWritable()
        do {
            try submitCurrent(isLast: true)
            pool?.stop()
            pool = nil
            finished = true
            var trailer = [UInt8]()
            trailer.reserveCapacity(8)
            for value in [crc, inputSize] {
                for shift in stride(from: 0, to: 32, by: 8) { trailer.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
            }
            try trailer.withUnsafeBytes { try sink($0) }
        } catch {
            fail()
            throw error
        }
    }

    private func checkWritable() throws {
        guard !finished else { throw CohortError(.invalidInput, "gzip stream is already finished") }
        guard !failed else { throw CohortError(.system, "gzip stream failed earlier and cannot continue") }
    }

    private func fail() {
        failed = true
        pool?.stop()
        pool = nil
    }

    /// Sends the current block off to be compressed (the last one waits for every block), starts
    /// a fresh block primed with its tail, and hands finished blocks to the sink in order.
    private func submitCurrent(isLast: Bool) throws {
        let block = current
        block.isLast = isLast
        if !isLast {
            let next = spare.popLast() ?? ParallelDeflateBlock(blockSize: Self.blockSize)
            next.reset(after: block)
            current = next
            if pool == nil && threads > 1 {
                pool = try ParallelDeflatePool(level: level, threads: threads, name: "cohort-gzip") { engine, block in
                    engine.compress(block)
                    block.markCompressed()
                }
            }
        }
        inFlight.append(block)
        if let pool {
            pool.submit(block)
        } else {
            engine.compress(block)
            block.markCompressed()
        }
        try emitFinishedBlocks(keepingAtMost: isLast ? 0 : maximumInFlight)
    }

    /// Hands every finished block at the head of the queue to the sink, waiting for the head
    /// while more than `limit` blocks are in flight.
    private func emitFinishedBlocks(keepingAtMost limit: Int) throws {
        while let head = inFlight.first {
            let wait = inFlight.count > limit
            guard head.isCompressed(wait: wait) else { return }
            inFlight.removeFirst()
            if let error = head.error { throw error }
            crc = UInt32(truncatingIfNeeded: crc32_combine(uLong(crc), uLong(head.crc), .init(head.count)))
            if head.outputCount > 0 {
                try sink(UnsafeRawBufferPointer(rebasing: head.output[0..<head.outputCount]))
            }
            spare.append(head)
        }
    }

    /// Gzip-compresses `bytes` in one call.
    public static func compress(_ bytes: [UInt8], level: Int = 6, threads: Int = GzipWriter.defaultThreadCount) throws -> [UInt8] {
        var result: [UInt8] = []
        let writer = try GzipWriter(level: level, threads: threads) { result.append(contentsOf: $0) }
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
