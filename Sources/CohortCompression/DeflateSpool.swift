import CZlib
import CohortCore
package import CohortIO
package import Foundation
import Synchronization

/// A file deflated while it was written (``DeflateSpool``): raw-deflate bytes in a spool file,
/// ending byte-aligned (a sync flush, not final), with the length and CRC-32 of what they inflate
/// to. ``GzipWriter/writePrecompressed(_:)`` puts them into a gzip stream as they are.
package struct DeflatedFile: Sendable, Equatable {
    /// The spool file holding the deflate bytes.
    package let spoolPath: String
    /// Bytes in the spool file.
    package let compressedSize: UInt64
    /// Bytes they inflate to: the written file's size.
    package let size: UInt64
    /// CRC-32 of the written file's bytes.
    package let crc: UInt32
}

/// Deflates files as their writers write them, on a pool of its own, so an archive of them later
/// only copies the compressed bytes: the compression runs while the export is still writing
/// (its record workers leave part of the cores idle), not after it.
///
/// Each file's bytes are cut where its writer handed them to the operating system (a
/// ``FileWriteTap`` sees each hand-over; at most ``GzipWriter/blockSize`` a block), and each block
/// is deflated on its own, primed with the last ``dictionarySize`` bytes the same file had before
/// it (the first block of a file with nothing). A deflate stream may only refer back to bytes
/// that precede it in the stream it is part of; the dictionary is exactly those bytes of the file,
/// and nothing in a file's blocks refers to anything before the file. So the blocks of a file,
/// in order, are a valid piece of any deflate stream placed right after any byte-aligned point —
/// such as the end of the tar header before the file in the archive. The blocks are written to
/// the file's spool file in order (a block finished early waits for the ones before it), whatever
/// thread compressed them; what a block compresses to depends only on its bytes, its dictionary
/// and the level, so the same writes give the same spool bytes whatever the thread count.
///
/// **Only an exact copy is ever used.** ``deflated(_:identity:)`` gives a file's spool only when
/// every block was compressed and written, the size deflated equals the size at close, and the
/// file on disk is still the version its writer closed (``FileIdentity``: inode, size, times to
/// the nanosecond) — the bytes the digests describe and the residual scan checked. Anything else (a
/// zlib or spool write failure, a file touched since) answers nil, and the archive reads the file
/// from disk as it always did. A file written to the spool alone has no copy on disk
/// (``FileIdentity/isTapOnly``, `FileWriteTaps.withoutDiskCopy(where:)`): ``deflatedTapOnly(_:)``
/// is all there is of it, and an export whose spool did not keep such a file whole stops before
/// it archives anything (`ExportJob.checkTapOnlyFiles`).
///
/// **Memory is bounded:** ``blockCount`` blocks in all (a writer waits for a free one), each file
/// a ``dictionarySize`` tail, one deflate state per thread. ``finishWriting()`` frees the pool and
/// blocks once the files are written; ``remove()`` deletes the spool files.
package final class DeflateSpool: Sendable {
    /// Bytes of a file's past a block is primed with. Smaller than deflate's 32 KiB window, since
    /// every file being written keeps one (34 in a full export). Against 128 KiB blocks primed
    /// with 32 KiB, 64 KiB blocks primed with 8 KiB deflate bench M's tables 1.3 % larger and its
    /// FHIR Observations 6.6 % (16 KiB: 0.7 % and 2.7 %, but L's full export then peaked at 63.6
    /// MiB, too close to issue 28's 64; 32 KiB: 0.5 % and 0.7 %).
    package static let dictionarySize = 8 * 1024

    /// The thread count used when none is given: the archive's own (``GzipWriter/defaultThreadCount``:
    /// the cores this process may use, at most 4). Half the cores (one here) kept up with the
    /// CSV + JSON export but not with the full export's FHIR file: its writer waited for blocks,
    /// and bench M's full export took 7.6–8.0 s against 6.7 s with two.
    package static var defaultThreadCount: Int { GzipWriter.defaultThreadCount }

    /// The folder of the spool files (created by ``init(directory:level:threads:)``).
    package let directory: URL
    private let pool: ParallelDeflatePool<Job>
    private let free = BoundedQueue<ParallelDeflateBlock>(limit: nil)
    private let files = Mutex<[String: (file: DeflatedFile, identity: FileIdentity)]>([:])
    private let used = Mutex<Set<String>>([])
    private let nextSpool = Atomic<Int>(0)
    /// The blocks in circulation.
    package let blockCount: Int

    /// One block to compress: which file it belongs to and its place in that file.
    fileprivate struct Job: Sendable {
        let block: ParallelDeflateBlock
        let tap: Tap
        let sequence: Int
    }

    /// Starts `threads` compression threads at zlib `level` and makes `directory` (mode 0700).
    ///
    /// - Throws: `.invalidInput` for a level outside 0...9; `.system` when zlib cannot start or
    ///   the folder cannot be made.
    package init(directory: URL, level: Int, threads: Int = DeflateSpool.defaultThreadCount) throws {
        guard (0...9).contains(level) else { throw CohortError(.invalidInput, "gzip level must be between 0 and 9") }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        self.directory = directory
        let count = min(max(1, threads), GzipWriter.maximumThreadCount)
        // A block per thread being compressed, and six the writers fill meanwhile (with two, a
        // writer waited for a block to come back several hundred times in bench M's CSV + JSON
        // export; issue 28, sixteenth round).
        blockCount = count + 6
        for _ in 0..<blockCount { free.send(ParallelDeflateBlock(blockSize: GzipWriter.blockSize)) }
        pool = try ParallelDeflatePool(level: level, threads: count, name: "cohort-deflate") { engine, job in
            engine.compress(job.block)
            job.tap.compressed(job)
        }
    }

    deinit {
        pool.stop()
    }

    /// Taps for `BufferedFileWriter`: every file under `data/` is deflated as it is written.
    package var taps: FileWriteTaps {
        FileWriteTaps { [self] path in path.hasPrefix("data/") ? Tap(path: path, spool: self) : nil }
    }

    /// The deflated form of the file at bag-relative `path` if every byte of the version that
    /// `identity` names was deflated; nil otherwise (the file must be read).
    package func deflated(_ path: String, identity: FileIdentity?) -> DeflatedFile? {
        guard let identity else { return nil }
        return files.withLock { found in
            guard let entry = found[path], entry.identity == identity, entry.file.size == identity.byteCount else { return nil }
            used.withLock { _ = $0.insert(path) }
            return entry.file
        }
    }

    /// The deflated form of the file at bag-relative `path` written to the spool alone
    /// (``FileIdentity/isTapOnly``: no copy of it is on disk), if every byte of it was deflated.
    package func deflatedTapOnly(_ path: String) -> DeflatedFile? {
        files.withLock { found in
            guard let entry = found[path], entry.identity.isTapOnly else { return nil }
            if entry.file.size > 0 { used.withLock { _ = $0.insert(path) } }
            return entry.file
        }
    }

    /// The bag-relative paths of the files written to the spool alone and deflated completely.
    package var tapOnlyPaths: Set<String> { files.withLock { Set($0.filter { $0.value.identity.isTapOnly }.keys) } }

    /// Files deflated completely so far (tests).
    package var count: Int { files.withLock { $0.count } }

    /// The bag-relative paths ``deflated(_:identity:)`` handed out, sorted: the files an archive
    /// took from the spool.
    package var usedPaths: [String] { used.withLock { $0.sorted() } }

    /// Ends the compression threads and frees the blocks, once every tapped file is closed (the
    /// spool files and what ``deflated(_:identity:)`` answers stay). Idempotent.
    package func finishWriting() {
        pool.finish()
        free.cancel()
    }

    /// Deletes the spool files; ``deflated(_:identity:)`` answers nil from then on.
    package func remove() {
        finishWriting()
        files.withLock { $0.removeAll() }
        try? FileManager.default.removeItem(at: directory)
    }

    /// A free block, waiting for one; nil once the spool stopped.
    fileprivate func takeBlock() -> ParallelDeflateBlock? {
        (try? free.receive()) ?? nil
    }

    fileprivate func giveBack(_ block: ParallelDeflateBlock) {
        free.send(block)
    }

    fileprivate func submit(_ job: Job) -> Bool {
        pool.submit(job)
    }

    fileprivate func newSpoolPath() -> String {
        directory.appendingPathComponent("\(nextSpool.add(1, ordering: .relaxed).newValue).deflate").path
    }

    fileprivate func record(_ path: String, _ file: DeflatedFile, identity: FileIdentity) {
        files.withLock { $0[path] = (file, identity) }
    }
}

extension DeflateSpool {
    /// One file's blocks: cut and primed on the writer's thread, written to the spool in order by
    /// whichever compression thread finishes the next one.
    fileprivate final class Tap: FileWriteTap, Sendable {
        let path: String
        let spool: DeflateSpool
        private let state = Mutex(State())
        /// Signalled when the last block is written after the writer closed the file.
        private let drained = DispatchSemaphore(value: 0)

        struct State {
            /// The file's last bytes so far (at most ``DeflateSpool/dictionarySize``).
            var tail: [UInt8] = []
            var submitted = 0
            var written = 0
            /// Blocks compressed before an earlier one of the file, by place.
            var parked: [Int: ParallelDeflateBlock] = [:]
            var spool: SpoolFile?
            var crc: UInt32 = 0
            var size: UInt64 = 0
            var compressedSize: UInt64 = 0
            var failed = false
            var closing = false
        }

        init(path: String, spool: DeflateSpool) {
            self.path = path
            self.spool = spool
        }

        func wrote(_ bytes: UnsafeRawBufferPointer) {
            var offset = 0
            while offset < bytes.count {
                let count = min(bytes.count - offset, GzipWriter.blockSize)
                let piece = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
                offset += count
                if state.withLock({ $0.failed }) { return }
                guard let block = spool.takeBlock() else { return fail() }
                block.reset(after: nil)
                UnsafeMutableRawBufferPointer(rebasing: block.input[0..<count]).copyMemory(from: piece)
                block.count = count
                let sequence = state.withLock { state in
                    state.tail.withUnsafeBytes { tail in
                        UnsafeMutableRawBufferPointer(rebasing: block.dictionary[0..<tail.count]).copyMemory(from: tail)
                    }
                    block.dictionaryCount = state.tail.count
                    Self.keepTail(&state.tail, after: piece)
                    state.submitted += 1
                    return state.submitted - 1
                }
                guard spool.submit(Job(block: block, tap: self, sequence: sequence)) else {
                    spool.giveBack(block)
                    return fail(undoing: 1)
                }
            }
        }

        func closed(identity: FileIdentity) {
            let wait = state.withLock { state -> Bool in
                state.closing = true
                return state.written < state.submitted
            }
            if wait { drained.wait() }
            let finished = state.withLock { state -> DeflatedFile? in
                let spoolFile = state.spool
                state.spool = nil
                // An empty file written to the spool alone has no spool file: nothing to copy.
                if identity.isTapOnly, spoolFile == nil, !state.failed, state.submitted == 0 {
                    return DeflatedFile(spoolPath: "", compressedSize: 0, size: 0, crc: 0)
                }
                guard let spoolFile, spoolFile.finish(), !state.failed, state.size > 0 else { return nil }
                return DeflatedFile(spoolPath: spoolFile.path, compressedSize: state.compressedSize, size: state.size, crc: state.crc)
            }
            if let finished, finished.size == identity.byteCount { spool.record(path, finished, identity: identity) }
        }

        /// A compression thread: `job` is compressed; writes it and any parked successors, in order.
        func compressed(_ job: Job) {
            state.withLock { state in
                state.parked[job.sequence] = job.block
                while let block = state.parked.removeValue(forKey: state.written) {
                    if !state.failed { append(block, to: &state) }
                    state.written += 1
                    spool.giveBack(block)
                }
                if state.closing && state.written == state.submitted { drained.signal() }
            }
        }

        private func append(_ block: ParallelDeflateBlock, to state: inout State) {
            do {
                if let error = block.error { throw error }
                if state.spool == nil { state.spool = try SpoolFile(path: spool.newSpoolPath()) }
                try state.spool?.append(UnsafeRawBufferPointer(rebasing: block.output[0..<block.outputCount]))
                state.crc = UInt32(truncatingIfNeeded: crc32_combine(uLong(state.crc), uLong(block.crc), .init(block.count)))
                state.size += UInt64(block.count)
                state.compressedSize += UInt64(block.outputCount)
            } catch {
                state.failed = true
            }
        }

        /// Marks the file failed (its spool is not used); `undoing` blocks counted as submitted
        /// were not.
        private func fail(undoing: Int = 0) {
            state.withLock { state in
                state.failed = true
                state.submitted -= undoing
            }
        }

        private static func keepTail(_ tail: inout [UInt8], after piece: UnsafeRawBufferPointer) {
            let limit = DeflateSpool.dictionarySize
            if piece.count >= limit {
                tail.removeAll(keepingCapacity: true)
                tail.append(contentsOf: UnsafeRawBufferPointer(rebasing: piece[(piece.count - limit)...]))
            } else {
                let overflow = tail.count + piece.count - limit
                if overflow > 0 { tail.removeFirst(overflow) }
                tail.append(contentsOf: piece)
            }
        }
    }
}

/// An append-only spool file (mode 0600), written by one thread at a time (under its tap's lock).
final class SpoolFile {
    let path: String
    private var descriptor: Int32

    init(path: String) throws {
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CohortError(.system, "cannot create a compression spool file", at: .init(file: path)) }
        self.path = path
    }

    deinit {
        if descriptor >= 0 { _ = close(descriptor) }
    }

    /// Hands `bytes` to the operating system.
    func append(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let result = write(descriptor, base + offset, bytes.count - offset)
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else { throw CohortError(.system, "cannot write a compression spool file", at: .init(file: path)) }
            offset += result
        }
    }

    /// Closes the file; false when the operating system reported an error.
    func finish() -> Bool {
        defer { descriptor = -1 }
        return descriptor >= 0 && close(descriptor) == 0
    }
}
