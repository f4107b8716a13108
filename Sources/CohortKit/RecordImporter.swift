import CohortCore
import CohortCrypto
import CohortIO
import CohortImport
import CohortStore
public import Foundation
import Synchronization

/// The outcome of importing one file.
public struct ImportFileResult: Sendable, Codable {
    /// The file as given.
    public var file: String
    /// `csv`, `ndjson` or `json`.
    public var format: String
    /// Rows read from the file.
    public var rows: Int
    /// Records newly stored.
    public var inserted: Int
    /// Rows already stored (same participant, kind, start and source); not stored again.
    public var duplicates: Int
    /// Rows refused and written to the rejects file (0 without one).
    public var rejected: Int
    /// Wall-clock seconds the import took.
    public var seconds: Double

    enum CodingKeys: String, CodingKey {
        case file, format, rows, inserted, duplicates, rejected, seconds
    }
}

/// Imports record files (CSV, NDJSON, JSON) into the store. One file = one transaction: on the
/// first bad row nothing from the file is stored, unless a rejects file is given, in which case
/// good rows are kept and bad rows are written there with their reasons.
public struct RecordImporter: Sendable {
    /// The workspace whose store receives the records.
    public let workspace: Workspace
    /// Called with the number of rows read so far (for a progress line on a terminal).
    public var progress: (@Sendable (Int) -> Void)?
    /// Threads that validate rows (default ``defaultThreads``). With 1, the reading thread validates;
    /// with more, rows are validated in chunks on that many threads besides the reader
    /// (``ParallelRecordValidation``). The store's writer is one thread either way, and what is
    /// stored, rejected or refused does not depend on the count.
    public var threads: Int

    /// The validating threads that fill the cores the reader and the writer leave free, at least
    /// one: with 1 the reading thread validates (two threads in all), with N > 1 there are N + 2.
    /// On a 2-core machine that is 1 — measured at bench M, two validators beside the reader and
    /// the writer competed with the writer for the two cores (339k–352k records/s against
    /// 354k–399k with one; docs/performance.md).
    public static var defaultThreads: Int { max(1, Cores.available - 2) }

    /// An importer into `workspace`; `progress` is called with the number of rows read so far.
    public init(workspace: Workspace, progress: (@Sendable (Int) -> Void)? = nil, threads: Int = RecordImporter.defaultThreads) {
        self.workspace = workspace
        self.progress = progress
        self.threads = max(1, threads)
    }

    /// The record CSV header. `participant`, `kind` and `start` are required; the others optional.
    public static let columns = RecordColumns.names

    /// The columns a rejects file puts before the record columns (where the row failed and why).
    /// A CSV import accepts and ignores them, so a fixed rejects file imports as it is.
    public static let rejectsAnnotationColumns = RecordColumns.rejectsAnnotations

    /// Imports `url`. `rejectsURL`: keep good rows and write bad ones there (CSV with line, field, reason).
    public func importFile(_ url: URL, rejectsURL: URL? = nil, studyID: String? = nil) throws -> ImportFileResult {
        let started = Date()
        let pinned = try workspace.currentProtocol()
        if let studyID, studyID != pinned.studyProtocol.id {
            throw CohortError(.notFound, "this workspace holds study '\(pinned.studyProtocol.id)', not '\(studyID)'",
                hint: "pass --workspace for the study's workspace")
        }
        let file = url.path
        guard FileManager.default.isReadableFile(atPath: file) else {
            throw CohortError(.notFound, "cannot read the data file", at: .init(file: file), hint: "check the path")
        }
        let format = Self.format(of: url)
        let subjects = try StoreSubjects(workspace: workspace)
        let validator = try RecordValidator(directory: subjects, studyProtocol: pinned.studyProtocol, file: file, now: workspace.now())
        let digest = BackgroundDigest(of: url)
        // On every path out, success or error, the hashing thread has ended first: a process
        // that exits (after an error) while it still hashed crashed in OpenSSL's cleanup.
        defer { digest.wait() }
        let info = ImportBatchInfo(fileName: url.lastPathComponent, fileSHA256: "", format: format, pendingSHA256: digest.result)
        let rejects = try rejectsURL.map { try RejectsWriter(url: $0, columns: RecordImporter.columns) }
        if threads > 1 {
            // The threads start inside the transaction: when it cannot begin (the database is
            // locked), none is left waiting.
            let result = try workspace.store.importBatch(info, actor: workspace.actor, at: workspace.now()) { sink in
                try ParallelRecordValidation(
                    url: url, format: format, validator: validator, handles: subjects.handles, rejects: rejects, threads: threads,
                    preparer: sink.preparer, progress: progress
                ).run(into: sink)
            }
            return try finish(result, file: file, format: format, started: started)
        }
        // Rows are read and validated on a thread of their own and handed over in batches; this
        // thread (the database's writer, inside the file's transaction) inserts them. The reader
        // (with the rejects file) moves to that thread through a lock and never comes back: its
        // counts return through the handoff.
        let pending = BoundedQueue<ValidatingReader>(limit: 1)
        pending.send(ValidatingReader(
            url: url, format: format, file: file, validator: validator, handles: subjects.handles, rejects: rejects, progress: progress))
        pending.close()
        let result = try workspace.store.importBatch(info, actor: workspace.actor, at: workspace.now()) { inserter in
            let handoff = BoundedQueue<ValidatingReader.Output>(limit: 8)
            let preparer = inserter.preparer
            Thread {
                let reader = try? pending.receive()
                reader?.run(into: handoff, preparer: preparer)
            }.start()
            var accepted = 0
            var counts = (total: 0, rejected: 0)
            do {
                while let output = try handoff.receive() {
                    switch output {
                    case .batch(let batch):
                        // Queued and written in groups; a row that is already stored counts as a duplicate.
                        try inserter.add(batch)
                        accepted += batch.count
                    case .counts(let total, let rejected):
                        counts = (total, rejected)
                    }
                }
                try inserter.flush()
            } catch {
                // Stop the reader and wait until it has closed its files before the transaction ends.
                handoff.cancel()
                handoff.waitUntilClosed()
                throw error
            }
            return (counts.total, inserter.insertedCount, accepted - inserter.insertedCount, counts.rejected)
        }
        return try finish(result, file: file, format: format, started: started)
    }

    /// Signs the audit chain's head and reports the import of `file`.
    private func finish(_ result: ImportBatchResult, file: String, format: String, started: Date) throws -> ImportFileResult {
        try workspace.checkpoint()
        return ImportFileResult(
            file: file, format: format, rows: result.rowsTotal, inserted: result.inserted, duplicates: result.duplicates, rejected: result.rejected,
            seconds: Date().timeIntervalSince(started))
    }

    static func format(of url: URL) -> String {
        switch url.pathExtension.lowercased() {
        case "ndjson", "jsonl": "ndjson"
        case "json": "json"
        default: "csv"
        }
    }

    /// Starts hashing `url` on a thread of its own; the returned function waits for the digest.
    /// The file is read twice either way (hashed, and parsed); hashed beside the import, the
    /// hash no longer delays it — it was 7.6 % of the writer thread's time at bench M.
    static func fileSHA256(_ url: URL) throws -> String {
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw CohortError(.notFound, "cannot read the data file", at: .init(file: url.path))
        }
        return try SHA256Hasher.digest(ofFile: url.path).sha256
    }
}

/// A file's SHA-256 computed on a thread of its own beside the import (the batch row records it).
/// ``result`` waits for it; ``wait()`` only waits for the thread to end — the import calls it on
/// every path out, so no hashing thread outlives the call that started it.
final class BackgroundDigest: Sendable {
    /// The files being hashed now, with how many threads hash each (tests check that none
    /// outlives its import).
    static let hashing = Mutex<[String: Int]>([:])

    private let queue = BoundedQueue<String>(limit: 1)
    private let running = DispatchGroup()
    private let url: URL

    /// Starts hashing `url`.
    init(of url: URL) {
        self.url = url
        let queue = queue
        running.enter()
        Self.hashing.withLock { $0[url.path, default: 0] += 1 }
        Thread { [running] in
            defer {
                Self.hashing.withLock { hashing in
                    let left = (hashing[url.path] ?? 1) - 1
                    hashing[url.path] = left > 0 ? left : nil
                }
                running.leave()
            }
            do {
                queue.send(try RecordImporter.fileSHA256(url))
                queue.close()
            } catch {
                queue.close(failure: error)
            }
        }.start()
    }

    /// The file's digest (waits for it); throws what reading the file threw.
    var result: @Sendable () throws -> String {
        { [queue, url] in
            guard let digest = try queue.receive() else { throw CohortError(.system, "cannot read the data file", at: .init(file: url.path)) }
            return digest
        }
    }

    /// Waits until the hashing thread has ended.
    func wait() {
        running.wait()
    }
}

/// Reads one file's rows and validates them, on the thread that calls ``run(into:)``: valid
/// records go to the handoff in batches, rejected rows to the rejects file (when there is one),
/// and the first other error ends the run and reaches the consumer.
///
/// Owned by that thread alone: it closes the rejects file itself and hands its counts to the
/// consumer as the last element of the queue before closing it.
private final class ValidatingReader {
    let url: URL
    let format: String
    let file: String
    let validator: RecordValidator
    /// The store's handle of each participant, by the validator's participant position.
    let handles: [ParticipantHandle]
    let rejects: RejectsWriter?
    let progress: (@Sendable (Int) -> Void)?
    private var total = 0
    private var rejected = 0
    static let batchSize = 256

    init(
        url: URL, format: String, file: String, validator: RecordValidator, handles: [ParticipantHandle], rejects: RejectsWriter?,
        progress: (@Sendable (Int) -> Void)?
    ) {
        self.url = url
        self.format = format
        self.file = file
        self.validator = validator
        self.handles = handles
        self.rejects = rejects
        self.progress = progress
    }

    /// What the reader hands to the database writer: batches of valid rows, made ready for the
    /// writer's sink (issue 28: the import's writer is its one sequential thread), then its counts.
    enum Output {
        case batch(PreparedRecords)
        case counts(total: Int, rejected: Int)
    }

    /// Thrown inside the row loop when the consumer has cancelled.
    private struct Cancelled: Error {}

    func run(into handoff: BoundedQueue<Output>, preparer: RecordPreparer) {
        var batch: [(ParticipantHandle, Record)] = []
        batch.reserveCapacity(Self.batchSize)
        do {
            try RowSource.forEachRow(url: url, format: format) { line, fields in
                total += 1
                if total % 50_000 == 0 { progress?(total) }
                do {
                    let (position, record) = try validator.validate(fields, line: line)
                    batch.append((handles[position], record))
                    if batch.count == Self.batchSize {
                        guard handoff.send(.batch(try preparer.prepare(batch))) else { throw Cancelled() }
                        batch.removeAll(keepingCapacity: true)
                    }
                } catch let error as CohortError where rejects != nil && RecordValidator.refusesRowOnly(error) {
                    rejected += 1
                    try rejects?.write(line: line, field: error.location?.field ?? "", reason: error.message, fields: fields.dictionary(file: file, line: line))
                }
            }
            if !batch.isEmpty, !handoff.send(.batch(try preparer.prepare(batch))) { throw Cancelled() }
            try rejects?.close()
            handoff.send(.counts(total: total, rejected: rejected))
            handoff.close()
        } catch is Cancelled {
            try? rejects?.close()
            handoff.close()
        } catch {
            try? rejects?.close()
            handoff.close(failure: error)
        }
    }
}
