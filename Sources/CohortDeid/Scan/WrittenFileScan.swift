import CohortCore
package import CohortIO
import Foundation
import Synchronization

/// The residual scan of the payload files made from the bytes their writers hand to the system,
/// as they write them (a ``FileWriteTap`` per file), on threads of its own: the scan then runs
/// while the export is still writing (its record workers leave part of the cores idle) and
/// nothing is read back, instead of a stage of its own after the write that reads every file
/// again (issue 28).
///
/// Each file's bytes are cut into lines exactly as ``LineReader/forEachLine(of:in:maxLineBytes:_:)``
/// cuts a file (`\n` ends a line, a `\r` before it is dropped, a last line without an end
/// counts), and the lines go through the same ``ResidualScanner/ValueScanner`` a scan of the
/// file on disk uses, in order, on one of the scan's threads (a file stays on one): the same
/// values matched by the same rules, so a file's findings and counts are the ones a read of it
/// gives. ``ResidualScanner/scan(directory:written:)`` merges them with the files it reads.
///
/// **Only the bytes on disk count.** A file's result is used only when its writer closed it and
/// the file is still that version (``FileIdentity``: inode, size, times to the nanosecond), as
/// the bag's digests and the deflate spool do; a file changed, replaced or touched since, one
/// written without a tap, or one whose scan was cut short is read and scanned as before. A file
/// written to its taps alone (``FileIdentity/isTapOnly``) has no copy on disk to read: its result
/// (``tapOnlyResult(for:)``) is the scan of the very bytes the archive holds, and an export whose
/// scan of such a file was cut short stops before it publishes (`ExportJob.checkTapOnlyFiles`).
///
/// **Memory is bounded:** each thread has at most ``queuedWrites`` copies of written bytes
/// waiting (a writer waits for room), each at most ``BufferedFileWriter/capacity``; each open
/// file keeps its scanner's memo and the start of a line not yet ended.
package final class WrittenFileScan: Sendable {
    /// Copies of written bytes each thread may have waiting before a writer waits: 8 (512 KiB a
    /// thread). With 2, the writer thread found a scan queue full about 1,600 times in bench M's
    /// CSV + JSON export, each time sleeping until a scan thread woke and took a copy (issue 28,
    /// sixteenth round: the threads' sleeps, ``ExportWriter``).
    static let queuedWrites = 8

    private let scanner: ResidualScanner
    private let workers: [SerialWorker]
    /// Each worker's scratch space, used only by jobs on that worker's thread.
    private let scratch: [ScanThread]
    private let nextWorker = Atomic<Int>(0)
    private let results = Mutex<[String: (result: ResidualScanner.PieceResult, identity: FileIdentity)]>([:])

    /// Scans with `scanner`'s rules on `threads` threads (default: the scanner's own count).
    package init(scanner: ResidualScanner, threads: Int? = nil) {
        self.scanner = scanner
        let count = max(1, threads ?? scanner.threads)
        workers = (0..<count).map { SerialWorker(name: "cohort-scan-\($0)", limit: Self.queuedWrites) }
        scratch = (0..<count).map { _ in ScanThread() }
    }

    deinit {
        cancel()
    }

    /// Taps for `BufferedFileWriter`: every file under `data/` that a directory scan of `data/`
    /// does not skip (``ResidualScanner/isFixedText(_:)``), files taken by the threads in turn.
    package var taps: FileWriteTaps {
        FileWriteTaps { [self] path in
            guard Self.scansAsWritten(path) else { return nil }
            let relative = String(path.dropFirst("data/".count))
            let n = nextWorker.add(1, ordering: .relaxed).oldValue % workers.count
            return Tap(relative: relative, scan: self, worker: workers[n], thread: scratch[n])
        }
    }

    /// The result for the file at `relative` (to the scanned `data/` folder) if every byte of the
    /// version `identity` names was scanned; nil otherwise (the file must be read).
    func result(for relative: String, identity: FileIdentity?) -> ResidualScanner.PieceResult? {
        guard let identity else { return nil }
        return results.withLock { found in
            guard let entry = found[relative], entry.identity == identity else { return nil }
            return entry.result
        }
    }

    /// The result for the file at `relative` written to its taps alone (``FileIdentity/isTapOnly``:
    /// no copy of it is on disk), if every byte of it was scanned.
    func tapOnlyResult(for relative: String) -> ResidualScanner.PieceResult? {
        results.withLock { found in
            guard let entry = found[relative], entry.identity.isTapOnly else { return nil }
            return entry.result
        }
    }

    /// The paths (relative to `data/`) of the files written to their taps alone and scanned
    /// completely.
    package var tapOnlyPaths: Set<String> { results.withLock { Set($0.filter { $0.value.identity.isTapOnly }.keys) } }

    /// Whether a file at bag-relative `path` is scanned as it is written (``taps``).
    package static func scansAsWritten(_ path: String) -> Bool {
        path.hasPrefix("data/") && !ResidualScanner.isFixedText(String(path.dropFirst("data/".count)))
    }

    /// Files scanned completely so far (tests).
    package var count: Int { results.withLock { $0.count } }

    /// Waits until every write handed over has been scanned and the threads have ended; call it
    /// once the files are closed, before ``ResidualScanner/scan(directory:written:)``.
    package func finishWriting() {
        for worker in workers { try? worker.finish() }
    }

    /// Drops what is queued and ends the threads (an abandoned export); files not finished by
    /// then have no result. Idempotent.
    package func cancel() {
        for worker in workers { worker.cancel() }
    }

    fileprivate func record(_ result: ResidualScanner.PieceResult, of relative: String, identity: FileIdentity) {
        results.withLock { $0[relative] = (result, identity) }
    }

    fileprivate func fileScanner(for relative: String) -> FileScanner {
        var values = ResidualScanner.ValueScanner(scanner: scanner, format: .init(path: relative))
        // Scratch space comes from the thread that scans the file (``FileScanner``).
        values.workspace = LineWorkspace(capacity: 0)
        return FileScanner(values: values)
    }

    /// One file's tap: copies each hand-over and queues it to the file's thread.
    private final class Tap: FileWriteTap {
        let relative: String
        let scan: WrittenFileScan
        let worker: SerialWorker
        /// Used only on `worker`'s thread once the first job is queued (with `file`).
        let thread: ScanThread
        let file: FileScanner

        init(relative: String, scan: WrittenFileScan, worker: SerialWorker, thread: ScanThread) {
            self.relative = relative
            self.scan = scan
            self.worker = worker
            self.thread = thread
            file = scan.fileScanner(for: relative)
        }

        func wrote(_ bytes: UnsafeRawBufferPointer) {
            var offset = 0
            guard let base = bytes.baseAddress else { return }
            while offset < bytes.count {
                let n = min(bytes.count - offset, BufferedFileWriter.capacity)
                let piece = [UInt8](unsafeUninitializedCapacity: n) { copy, initialized in
                    copy.baseAddress?.initialize(from: (base + offset).assumingMemoryBound(to: UInt8.self), count: n)
                    initialized = n
                }
                offset += n
                let (file, thread) = (file, thread)
                // A worker that was cancelled drops the job, and then this file never gets a result.
                try? worker.submit { file.feed(piece, on: thread) }
            }
        }

        func closed(identity: FileIdentity) {
            let (file, thread, scan, relative) = (file, thread, scan, relative)
            try? worker.submit { scan.record(file.finish(on: thread), of: relative, identity: identity) }
        }
    }
}

/// The scratch space a scan thread lends the file it is scanning: matching a value needs buffers
/// (``LineWorkspace``) only while it runs, so the files open at once (23 in a full export) need
/// not keep one each.
/// Only jobs on its own thread use it, so its lock is never contended; the lock is what lets
/// the scan (shared by the writers' threads) hold it without an unchecked promise.
final class ScanThread: Sendable {
    private let workspace = Mutex(LineWorkspace())

    /// Exchanges `other` with the thread's scratch space: called before a file's bytes are
    /// scanned (the file takes it) and after (it gives it back).
    func exchange(_ other: inout LineWorkspace) {
        workspace.withLock { swap(&other, &$0) }
    }
}

/// One file's lines, cut from its written bytes as ``LineReader`` cuts a file, through a
/// ``ResidualScanner/ValueScanner``.
final class FileScanner {
    private var values: ResidualScanner.ValueScanner
    private var result = ResidualScanner.PieceResult()
    /// The start of a line whose end has not been written yet.
    private var carry: [UInt8] = []
    private var number = 0

    init(values: ResidualScanner.ValueScanner) {
        self.values = values
    }

    /// The next bytes of the file, scanned with `thread`'s scratch space.
    func feed(_ bytes: [UInt8], on thread: ScanThread) {
        thread.exchange(&values.workspace)
        bytes.withUnsafeBufferPointer { feed($0) }
        thread.exchange(&values.workspace)
    }

    private func feed(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        let n = bytes.count
        var start = 0
        while start < n, let hit = memchr(base + start, 0x0A, n - start) {
            let end = UnsafePointer(hit.assumingMemoryBound(to: UInt8.self)) - base
            let rest = UnsafeBufferPointer(start: base + start, count: end - start)
            if carry.isEmpty {
                line(rest)
            } else {
                carry.append(contentsOf: rest)
                carry.withUnsafeBufferPointer { line($0) }
                carry.removeAll(keepingCapacity: true)
            }
            start = end + 1
        }
        if start < n { carry.append(contentsOf: UnsafeBufferPointer(start: base + start, count: n - start)) }
    }

    /// The file ended: its last line (if it has no line end) and what was found and counted.
    func finish(on thread: ScanThread) -> ResidualScanner.PieceResult {
        thread.exchange(&values.workspace)
        defer { thread.exchange(&values.workspace) }
        return finish()
    }

    private func finish() -> ResidualScanner.PieceResult {
        if !carry.isEmpty {
            carry.withUnsafeBufferPointer { line($0) }
            carry = []
        }
        var found: [ResidualScanner.Hit] = []
        values.finish { found.append($0) }
        result.findings += found
        result.lines = number
        result.freeTextValues = values.freeTextValues
        result.values = values.values
        return result
    }

    private func line(_ bytes: UnsafeBufferPointer<UInt8>) {
        number += 1
        var count = bytes.count
        if count > 0, bytes[count - 1] == 0x0D { count -= 1 }
        var found: [ResidualScanner.Hit] = []
        values.line(number, UnsafeBufferPointer(rebasing: bytes[0..<count])) { found.append($0) }
        if !found.isEmpty { result.findings += found }
    }
}
