import CohortCompliance
import CohortCore
import CohortDeid
import CohortIO
import CohortStore
import Foundation
import Synchronization

/// What the write stage reads of a covered record besides its de-identified row: compliance's
/// fields (kind, start, end, value, source) and the source the writer ranks a day's totals by.
/// Not the whole ``Record``: its participant, text and note are never read there, and every
/// byte of an outcome is copied into a chunk and out of it again (issue 28, eighth round).
struct CoveredRecord: Sendable, Equatable {
    var kind: RecordKind
    var start: Timestamp
    var end: Timestamp?
    var value: Double?
    var source: String?

    init(_ record: Record) {
        kind = record.kind
        start = record.start
        end = record.end
        value = record.value
        source = record.source
    }
}

/// One stored record as the export's write stage replays it, in the store's order.
enum RecordOutcome: Sendable {
    /// Consent does not cover it: neither published nor counted by compliance; counted under
    /// this `data type: reason` key.
    case leftOut(String)
    /// Covered by consent but of a kind left out for k over what an acquaintance knows: neither
    /// published nor counted by compliance (nor de-identified).
    case leftOutKind
    /// Covered by consent (compliance counts it), with its de-identified row — nil when it is
    /// dated after the publication horizon.
    case covered(CoveredRecord, DeidentifiedRecord?)
}

/// A worker's emptied chunks, handed back by the write stage once replayed, so a chunk's buffer
/// is allocated once and reused (capacity kept) instead of once per chunk: a chunk of 512
/// outcomes is above the 128 KiB from which the executables have glibc map every block of its
/// own (``ProcessMemory/returnLargeBlocksWhenFreed()``), so a fresh chunk each time cost an
/// `mmap`, its pages' first-touch faults and an `munmap` with a TLB shoot-down — about 2,100 of
/// each at bench M. At most ``limit`` chunks are kept; one handed back beyond that is freed.
final class ChunkPool: Sendable {
    private let spare = Mutex<[[RecordOutcome]]>([])
    private let made = Atomic<Int>(0)
    let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// An empty chunk with room for `capacity` outcomes: a spare one, or a new one.
    func take(capacity: Int) -> [RecordOutcome] {
        if let chunk = spare.withLock({ $0.popLast() }) { return chunk }
        made.add(1, ordering: .relaxed)
        var chunk: [RecordOutcome] = []
        chunk.reserveCapacity(capacity)
        return chunk
    }

    /// Takes back a replayed chunk: emptied here (its outcomes released), its buffer kept.
    ///
    /// The chunk must come in as the only reference to its buffer (the caller passes it with
    /// `consume`): emptying a buffer something else still holds allocates a new one of the same
    /// capacity instead. Until the thirteenth round of issue 28 a copy of the parameter here,
    /// and the caller's variable still alive across the call, did exactly that for every chunk
    /// (7,903 buffers at bench M, `heaptrack`); such a buffer now counts in ``chunksMade``.
    func giveBack(_ chunk: consuming [RecordOutcome]) {
        var emptied = consume chunk
        let buffer = emptied.withUnsafeBufferPointer { $0.baseAddress }
        emptied.removeAll(keepingCapacity: true)
        if emptied.withUnsafeBufferPointer({ $0.baseAddress }) != buffer { made.add(1, ordering: .relaxed) }
        spare.withLock { spare in
            if spare.count < limit { spare.append(emptied) }
        }
    }

    /// How many chunk buffers were allocated: by ``take(capacity:)``, and by ``giveBack(_:)``
    /// when it could not empty a chunk in place (tests).
    var chunksMade: Int { made.load(ordering: .relaxed) }
}

/// De-identifies the export's records on worker threads, participant by participant, while the
/// write stage hands the rows to the writers in participant order.
///
/// Worker `w` of `n` takes participants `w`, `w + n`, … in order: it reads one participant's
/// records through its own store reader (``StudyStore/withRecordReaders(_:_:)``: on SQLite its
/// own read-only connection, so the workers read at once), decides consent and de-identifies
/// each record with its own ``Deidentifier/workerCopy()``, and queues the outcomes in chunks of
/// at most ``chunkSize`` (at most ``queuedChunks`` queued ahead per worker). The write stage takes
/// participant `i`'s chunks from worker `i mod n` until the one marked last, so it replays exactly
/// the sequence one thread would produce; a record's row depends only on the record and its
/// participant, so the output is byte-identical whatever the thread count (tests compare 1, 2
/// and 3 threads). The workers' counts come back at the end and are merged into the export's
/// statistics.
///
/// **Memory does not grow with a participant's records.** A reader with its own connection
/// (``StoreRecordReader/hasOwnConnection``) is read as its rows come: each chunk goes to the
/// queue as soon as it is full, the read waiting while the queue is full, so a worker holds at
/// most a chunk being filled and ``queuedChunks`` queued — whether a participant has a hundred
/// records or a million. (Both stores' readers have connections of their own.) A reader that
/// shared a connection must not wait inside a read (the write stage and the other worker would
/// need that connection: it would deadlock), so for such a reader a participant's records are
/// read whole first, then de-identified and queued in the same chunks.
final class RecordWorkers: Sendable {
    fileprivate enum Message: Sendable {
        /// Outcomes of the participant being replayed, in order; `last`: its final chunk.
        case outcomes([RecordOutcome], last: Bool)
        case done(DeidentificationStats)
    }

    /// Records per queued chunk: 128 (about 28 KB of outcomes). With chunks reused, 512, 256 and
    /// 128 cost the same CPU at bench M, and the peak was about 1.2, 0.5 and 0 MB above the
    /// earlier fresh chunks of 512 (issue 28, eighth round).
    static let chunkSize = 128
    /// Chunks a worker may queue ahead of the write stage: 16 (2,048 records, about 0.45 MB a
    /// worker). The write stage takes one participant at a time, so while it replays worker 0's
    /// participant, worker 1 can only work as far ahead as its queue lets it; with 2 chunks it
    /// waited after 256 records of a participant of about 2,400 (bench M), and the two workers
    /// mostly took turns. 16 let both work: bench M's CSV + JSON export 5.25 → 4.87 s (4 runs
    /// each, in turn; 8 chunks: 4.98 s), bench L's 30.2 → 27.0 s; the peak 1.5 MiB (M) and
    /// 2.2 MiB (L) higher (issue 28, thirteenth round).
    static let queuedChunks = 16

    private let queues: [BoundedQueue<Message>]
    /// Worker `w`'s emptied chunks (``ChunkPool``): the queued ones, the one being replayed and
    /// the one being filled are all the buffers a worker needs.
    let pools: [ChunkPool]
    private let running = DispatchGroup()

    /// Starts one worker per reader over `included` (worker `w` reads through `readers[w]`; the
    /// readers must stay open until ``finish()`` or ``cancel()`` has returned). `chunkSize`:
    /// records per queued chunk (tests make it small).
    init(
        readers: [any StoreRecordReader], included: [StoredParticipant], coverage: [UUID: ConsentCoverage], leftOutKinds: [UUID: Set<String>],
        deid: Deidentifier, chunkSize: Int = RecordWorkers.chunkSize
    ) {
        let count = readers.count
        queues = (0..<count).map { _ in BoundedQueue(limit: Self.queuedChunks) }
        pools = (0..<count).map { _ in ChunkPool(limit: Self.queuedChunks + 2) }
        for worker in 0..<count {
            let queue = queues[worker]
            let pool = pools[worker]
            let reader = readers[worker]
            let running = running
            running.enter()
            let thread = Thread {
                defer { running.leave() }
                var work = Worker(queue: queue, pool: pool, reader: reader, deid: deid.workerCopy(), chunkSize: max(1, chunkSize))
                do {
                    for index in stride(from: worker, to: included.count, by: count) {
                        let participant = included[index]
                        let id = participant.participant.id
                        guard try work.run(participant, coverage: coverage[id], leftOutKinds: leftOutKinds[id]) else { return }  // cancelled
                    }
                    queue.send(.done(work.deid.stats))
                    queue.close()
                } catch {
                    queue.close(failure: error)
                }
            }
            thread.name = "cohort-export-records-\(worker)"
            thread.start()
        }
    }

    /// Replays participant `index`'s outcomes into `body`, in order (participants are taken in
    /// order, each once); each chunk replayed goes back to its worker's ``ChunkPool``.
    ///
    /// Each outcome is moved out of its chunk into `body` (`.leftOutKind`, which holds nothing,
    /// left in its place), so the row goes on to the writer without a copy: iterating the chunk
    /// copied every outcome — a retain of each of its strings — and the chunk's emptying released
    /// them again (issue 28, ninth round). It is moved, not swapped: a swap moved each outcome
    /// (about 220 bytes) three times (0.8 % of the CSV + JSON export's CPU in `memcpy`; issue 28,
    /// seventeenth round). Every slot holds an outcome again before `body` runs, so a throw
    /// leaves the chunk whole.
    ///
    /// - Throws: the error that stopped the worker (a store read), or what `body` throws.
    func forEachOutcome(of index: Int, _ body: (consuming RecordOutcome) throws -> Void) throws {
        let queue = queues[index % queues.count]
        let pool = pools[index % pools.count]
        while true {
            // The message is consumed, so the chunk is this function's alone: a swap below on a
            // chunk still shared with the message would copy the whole chunk first.
            let message = try queue.receive()
            guard case .outcomes(var outcomes, let last) = consume message else { throw Self.outOfStep }
            try outcomes.withUnsafeMutableBufferPointer { chunk in
                guard let base = chunk.baseAddress else { return }
                for position in 0..<chunk.count {
                    let outcome = (base + position).move()
                    (base + position).initialize(to: .leftOutKind)
                    try body(outcome)
                }
            }
            pool.giveBack(consume outcomes)
            if last { return }
        }
    }

    /// After the last participant: the workers' counts together; waits for every worker to end.
    func finish() throws -> DeidentificationStats {
        var stats = DeidentificationStats()
        for queue in queues {
            guard case .done(let counted) = try queue.receive() else { throw Self.outOfStep }
            stats.merge(counted)
        }
        running.wait()
        return stats
    }

    /// Stops the workers (what they queued is dropped) and waits for them to end; harmless after
    /// ``finish()``.
    func cancel() {
        for queue in queues { queue.cancel() }
        running.wait()
    }

    private static var outOfStep: CohortError {
        CohortError(
            .integrity, "the export's record workers fell out of step with its participants; nothing was published",
            hint: "this is a bug in cohort: run the export again with --threads 1 and report it")
    }
}

/// One worker thread's state: its queue, reader, de-identifier and the chunk it is filling.
private struct Worker {
    /// Thrown out of a read when the queue was cancelled (the export stopped).
    private struct Cancelled: Error {}

    let queue: BoundedQueue<RecordWorkers.Message>
    let pool: ChunkPool
    let reader: any StoreRecordReader
    var deid: Deidentifier
    let chunkSize: Int
    private var chunk: [RecordOutcome]
    /// Records read whole first (a reader without a connection of its own); capacity kept.
    private var records: [Record] = []

    init(queue: BoundedQueue<RecordWorkers.Message>, pool: ChunkPool, reader: any StoreRecordReader, deid: Deidentifier, chunkSize: Int) {
        self.queue = queue
        self.pool = pool
        self.reader = reader
        self.deid = deid
        self.chunkSize = chunkSize
        chunk = pool.take(capacity: chunkSize)
    }

    /// Reads, decides and queues one participant's records (the last chunk marked); false when
    /// the queue was cancelled.
    mutating func run(_ stored: StoredParticipant, coverage: ConsentCoverage?, leftOutKinds: Set<String>?) throws -> Bool {
        let participant = stored.participant
        // The participant's pseudonym and shift, held here for the run of their records
        // (``Deidentifier/record(_:of:state:)``).
        var state = deid.participantState(for: participant)
        do {
            if reader.hasOwnConnection {
                try reader.forEachRecord(stored.handle, participantID: participant.id) { record in
                    try add(record, of: participant, state: &state, coverage: coverage, leftOutKinds: leftOutKinds)
                }
            } else {
                var records = self.records
                self.records = []
                records.removeAll(keepingCapacity: true)
                try reader.forEachRecord(stored.handle, participantID: participant.id) { records.append($0) }
                for record in records { try add(record, of: participant, state: &state, coverage: coverage, leftOutKinds: leftOutKinds) }
                records.removeAll(keepingCapacity: true)
                self.records = records
            }
        } catch is Cancelled {
            return false
        }
        return send(last: true)
    }

    /// Consent decides first: a record it does not cover is neither published nor counted; then
    /// k over what an acquaintance knows: a kind left out is not in compliance either.
    private mutating func add(
        _ record: Record, of participant: Participant, state: inout Deidentifier.RecordParticipant, coverage: ConsentCoverage?, leftOutKinds: Set<String>?
    ) throws {
        if let key = coverage?.leftOutKey(for: record) {
            chunk.append(.leftOut(key))
        } else if leftOutKinds?.contains(record.kind.rawValue) == true {
            chunk.append(.leftOutKind)
        } else {
            chunk.append(.covered(CoveredRecord(record), deid.record(record, of: participant, state: &state)))
        }
        if chunk.count >= chunkSize, !send(last: false) { throw Cancelled() }
    }

    /// Queues the chunk (waiting while the queue is full) and starts a new one (a spare from
    /// the pool when the write stage has handed one back); false when the queue was cancelled.
    private mutating func send(last: Bool) -> Bool {
        var full = pool.take(capacity: chunkSize)
        swap(&full, &chunk)
        // Consumed into the message: a copy left here until `send` returns would share the chunk
        // with the write stage, which then copied it whole to move its outcomes out.
        return queue.send(.outcomes(consume full, last: last))
    }
}
