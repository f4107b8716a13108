import CZlib
import CohortCore

/// A zlib raw-deflate stream that compresses ``ParallelDeflateBlock``s one at a time.
///
/// Each block starts from `deflateReset` plus its dictionary, so what a block compresses to
/// depends only on its bytes, its dictionary, the level and whether it is last — never on which
/// engine or thread ran it, or on what that engine did before. That is what makes the parallel
/// output identical to the single-threaded one.
///
/// Used by one thread at a time: created by the writer, then either kept by it or handed once
/// to a single worker thread that alone uses it until it exits (see ``ParallelDeflatePool``).
final class ParallelDeflateEngine {
    private let stream: UnsafeMutablePointer<z_stream>

    /// - Throws: `.system` when zlib cannot start (out of memory).
    init(level: Int) throws {
        stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // Negative window bits: raw deflate, no zlib or gzip wrapper (the writer adds gzip's).
        let result = deflateInit2_(
            stream, Int32(level), Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
            Int32(MemoryLayout<z_stream>.size))
        guard result == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw CohortError(.system, "zlib could not start compressing", underlying: zlibMessage(result))
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Compresses `block.input` into `block.output` and computes its CRC-32; a zlib failure is
    /// recorded in `block.error` rather than thrown, so it reaches the writer in stream order.
    func compress(_ block: ParallelDeflateBlock) {
        do {
            try deflateBlock(block)
        } catch {
            block.error = error
        }
    }

    private func deflateBlock(_ block: ParallelDeflateBlock) throws(CohortError) {
        let input = UnsafeRawBufferPointer(rebasing: block.input[0..<block.count])
        block.crc = CRC32.checksum(input)
        block.outputCount = 0
        try check(deflateReset(stream))
        if block.dictionaryCount > 0, let dictionary = block.dictionary.baseAddress {
            try check(deflateSetDictionary(
                stream, dictionary.assumingMemoryBound(to: Bytef.self), uInt(block.dictionaryCount)))
        }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(block.count)
        let flush = block.isLast ? Z_FINISH : Z_SYNC_FLUSH
        while true {
            let room = block.output.count - block.outputCount
            stream.pointee.next_out = block.output.baseAddress.map {
                ($0 + block.outputCount).assumingMemoryBound(to: Bytef.self)
            }
            stream.pointee.avail_out = uInt(room)
            let result = deflate(stream, flush)
            guard result == Z_OK || result == Z_STREAM_END || result == Z_BUF_ERROR else {
                try check(result)
                return
            }
            block.outputCount += room - Int(stream.pointee.avail_out)
            // Z_FINISH is done at Z_STREAM_END; a sync flush is complete once deflate returns
            // with output space left over (zlib's documented contract).
            if block.isLast ? result == Z_STREAM_END : stream.pointee.avail_out > 0 { return }
            if stream.pointee.avail_out == 0 {
                block.growOutput()
            } else if result == Z_BUF_ERROR {
                try check(result)
            }
        }
    }

    private func check(_ result: Int32) throws(CohortError) {
        guard result == Z_OK else {
            throw CohortError(.system, "zlib compression failed", underlying: zlibMessage(result))
        }
    }
}
