import CohortCore
import CohortIO
import CohortImport
import CohortStore
import Foundation

/// One file's rows validated on several threads and written in input order.
///
/// The reader thread reads the file (the same `RowSource` as one thread: the same rows, lines
/// and reading errors) and copies rows into chunks of ``chunkRows``; chunk `k` goes to validator
/// `k mod n`, each with its own copy of the `RecordValidator`. The database's writer (the thread
/// that calls ``run(into:)``, inside the file's transaction) takes chunk `k` from validator
/// `k mod n`, so rows reach the store, and rejected rows the rejects file, in file order: the
/// store's contents, the rejects file and the first error are those of one thread, whatever `n`.
/// A reading error travels as the `failure` of the chunk after the last row read before it.
final class ParallelRecordValidation {
    static let chunkRows = 256
    /// Chunks queued per validator, in each direction.
    static let queueDepth = 2

    /// What a validator hands to the writer for one chunk, in the chunk's row order.
    struct Validated {
        /// The chunk's valid rows, made ready for the writer's sink.
        var records = PreparedRecords.none
        var rejects: [Rejected] = []
        var rows = 0
        /// The first error that is not a rejected row (or the reader's): the file stops here.
        var failure: (any Error)?
    }

    struct Rejected {
        var line: Int
        var field: String
        var reason: String
        var fields: [String: String]
    }

    private let inputs: [BoundedQueue<RecordRowChunk>]
    private let outputs: [BoundedQueue<Validated>]
    private let rejects: RejectsWriter?

    /// Starts the reader and `threads` validators for `url`.
    init(
        url: URL, format: String, validator: RecordValidator, handles: [ParticipantHandle], rejects: RejectsWriter?, threads: Int,
        preparer: RecordPreparer, progress: (@Sendable (Int) -> Void)?
    ) {
        let count = max(2, threads)
        let inputs = (0..<count).map { _ in BoundedQueue<RecordRowChunk>(limit: Self.queueDepth) }
        let outputs = (0..<count).map { _ in BoundedQueue<Validated>(limit: Self.queueDepth) }
        self.inputs = inputs
        self.outputs = outputs
        self.rejects = rejects
        let rejecting = rejects != nil
        let file = url.path
        // Each validator makes its own copy (its caches are its own; the tables are shared).
        let tables = validator.tables
        for (input, output) in zip(inputs, outputs) {
            Thread {
                Self.validate(
                    from: input, into: output, validator: RecordValidator(tables: tables), handles: handles, preparer: preparer, rejecting: rejecting,
                    file: file)
            }.start()
        }
        Thread {
            Self.read(url: url, format: format, into: inputs, keepingJSONLines: rejecting, progress: progress)
        }.start()
    }

    /// The reader: rows into chunks, chunk `k` to `inputs[k mod n]`; closes every input at the
    /// end (its last act: the file is closed by then).
    private static func read(
        url: URL, format: String, into inputs: [BoundedQueue<RecordRowChunk>], keepingJSONLines: Bool, progress: (@Sendable (Int) -> Void)?
    ) {
        var chunk = RecordRowChunk(keepingJSONLines: keepingJSONLines, capacity: chunkRows)
        var sent = 0
        var total = 0
        struct Cancelled: Error {}
        defer { for input in inputs { input.close() } }
        do {
            try RowSource.forEachRow(url: url, format: format) { line, fields in
                total += 1
                if total % 50_000 == 0 { progress?(total) }
                chunk.append(fields, line: line)
                guard chunk.count == chunkRows else { return }
                let full = chunk
                chunk = RecordRowChunk(keepingJSONLines: keepingJSONLines, capacity: chunkRows)
                guard inputs[sent % inputs.count].send(full) else { throw Cancelled() }
                sent += 1
            }
        } catch is Cancelled {
            return
        } catch {
            chunk.failure = error
        }
        if chunk.count > 0 || chunk.failure != nil { inputs[sent % inputs.count].send(chunk) }
    }

    /// A validator: chunks from `input`, validated, to `output`, until the input ends or the
    /// writer stops taking them.
    private static func validate(
        from input: BoundedQueue<RecordRowChunk>, into output: BoundedQueue<Validated>, validator: RecordValidator, handles: [ParticipantHandle],
        preparer: RecordPreparer, rejecting: Bool, file: String
    ) {
        defer { output.close() }
        while let chunk = try? input.receive() {
            var result = Validated()
            var records: [(ParticipantHandle, Record)] = []
            do {
                try chunk.forEachRow { fields, line in
                    result.rows += 1
                    do {
                        let (position, record) = try validator.validate(fields, line: line)
                        records.append((handles[position], record))
                    } catch let error as CohortError where rejecting && RecordValidator.refusesRowOnly(error) {
                        result.rejects.append(
                            Rejected(line: line, field: error.location?.field ?? "", reason: error.message, fields: fields.dictionary(file: file, line: line)))
                    }
                }
                result.failure = chunk.failure
            } catch {
                result.failure = error
            }
            do {
                result.records = try preparer.prepare(records)
            } catch {
                result.failure = result.failure ?? error
            }
            guard output.send(result) else {
                input.cancel()
                return
            }
        }
    }

    /// The writer's side: every chunk in file order into `inserter`, rejected rows into the
    /// rejects file; the counts `importBatch` records. On any error the reader and validators
    /// are stopped, and have let go of the file, before it is rethrown.
    func run(into inserter: any RecordSink) throws -> (total: Int, inserted: Int, duplicates: Int, rejected: Int) {
        var accepted = 0
        var total = 0
        var rejected = 0
        do {
            var index = 0
            while let chunk = try outputs[index % outputs.count].receive() {
                index += 1
                try inserter.add(chunk.records)
                accepted += chunk.records.count
                for row in chunk.rejects { try rejects?.write(line: row.line, field: row.field, reason: row.reason, fields: row.fields) }
                total += chunk.rows
                rejected += chunk.rejects.count
                if let failure = chunk.failure { throw failure }
            }
            try inserter.flush()
            try rejects?.close()
        } catch {
            stop()
            try? rejects?.close()
            throw error
        }
        return (total, inserter.insertedCount, accepted - inserter.insertedCount, rejected)
    }

    /// Stops the reader and the validators and waits until each has finished.
    private func stop() {
        for output in outputs { output.cancel() }
        for input in inputs { input.cancel() }
        for input in inputs { input.waitUntilClosed() }
        for output in outputs { output.waitUntilClosed() }
    }
}
