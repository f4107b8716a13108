import CohortCompliance
import CohortCore
import CohortDeid
import CohortIO
import CohortStore
import Foundation

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
    case covered(Record, DeidentifiedRecord?)
}

/// De-identifies the export's records on worker threads, participant by participant, while the
/// write stage hands the rows to the writers in participant order.
///
/// Worker `w` of `n` takes participants `w`, `w + n`, … in order: it reads one participant's
/// records through its own store reader (``StudyStore/withRecordReaders(_:_:)``: on SQLite its
/// own read-only connection, so the workers read at once), decides consent and de-identifies each record
/// with its own ``Deidentifier/workerCopy()``, and queues the participant's outcomes (at most
/// one queued ahead per worker: memory stays a few participants' records). The write stage takes
/// participant `i` from worker `i mod n`, so it replays exactly the sequence one thread would
/// produce; a record's row depends only on the record and its participant, so the output is
/// byte-identical whatever the thread count (tests compare 1, 2 and 3 threads). The workers'
/// counts come back at the end and are merged into the export's statistics.
final class RecordWorkers: Sendable {
    private enum Message: Sendable {
        case participant([RecordOutcome])
        case done(DeidentificationStats)
    }

    private let queues: [BoundedQueue<Message>]
    private let running = DispatchGroup()

    /// Starts one worker per reader over `included` (worker `w` reads through `readers[w]`; the
    /// readers must stay open until ``finish()`` or ``cancel()`` has returned).
    init(
        readers: [any StoreRecordReader], included: [StoredParticipant], coverage: [UUID: ConsentCoverage], leftOutKinds: [UUID: Set<String>],
        deid: Deidentifier
    ) {
        let count = readers.count
        queues = (0..<count).map { _ in BoundedQueue(limit: 1) }
        for worker in 0..<count {
            let queue = queues[worker]
            let reader = readers[worker]
            let running = running
            running.enter()
            let thread = Thread {
                defer { running.leave() }
                var deid = deid.workerCopy()
                do {
                    // One buffer for the worker's participants (capacity kept: it does not grow
                    // from empty, copying every record on the way, per participant).
                    var records: [Record] = []
                    for index in stride(from: worker, to: included.count, by: count) {
                        let stored = included[index]
                        let participant = stored.participant
                        records.removeAll(keepingCapacity: true)
                        try reader.forEachRecord(stored.handle, participantID: participant.id) { records.append($0) }
                        let covers = coverage[participant.id]
                        let kindsLeftOut = leftOutKinds[participant.id]
                        var outcomes: [RecordOutcome] = []
                        outcomes.reserveCapacity(records.count)
                        for record in records {
                            if let key = covers?.leftOutKey(for: record) {
                                outcomes.append(.leftOut(key))
                            } else if kindsLeftOut?.contains(record.kind.rawValue) == true {
                                outcomes.append(.leftOutKind)
                            } else {
                                outcomes.append(.covered(record, deid.record(record, of: participant)))
                            }
                        }
                        guard queue.send(.participant(outcomes)) else { return }  // cancelled
                    }
                    queue.send(.done(deid.stats))
                    queue.close()
                } catch {
                    queue.close(failure: error)
                }
            }
            thread.name = "cohort-export-records-\(worker)"
            thread.start()
        }
    }

    /// Participant `index`'s outcomes (participants are taken in order, each once).
    ///
    /// - Throws: the error that stopped the worker (a store read).
    func outcomes(of index: Int) throws -> [RecordOutcome] {
        guard case .participant(let outcomes) = try queues[index % queues.count].receive() else { throw Self.outOfStep }
        return outcomes
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
