import CohortCore
import Foundation

/// Batches handed from one producer thread to one consumer through a bounded queue: the producer
/// waits while `limit` batches are queued, the consumer while none is. The import reads and
/// validates rows on the producer thread while the consumer (the database's writer) inserts, so
/// parsing and SQLite use both cores.
///
/// Everything shared lives in one ``ConditionLock``; batches move through it from the producer
/// to the consumer and are not touched by the producer again.
final class BatchHandoff<Element>: Sendable {
    private struct State {
        /// At most `limit` batches, so taking the first one is cheap.
        var queue: [[Element]] = []
        var finished = false
        var failure: (any Error)?
        var cancelled = false
        var total = 0
        var rejected = 0
    }

    private let limit: Int
    private let state = ConditionLock(State())

    init(limit: Int = 8) {
        self.limit = max(1, limit)
    }

    /// Producer: queues `batch`, waiting while the queue is full. Returns false when the consumer
    /// has cancelled; the producer then stops and calls ``finish(_:total:rejected:)``.
    func send(_ batch: [Element]) -> Bool {
        state.withLock(until: { $0.queue.count < limit || $0.cancelled }) { state in
            guard !state.cancelled else { return false }
            state.queue.append(batch)
            return true
        }
    }

    /// Producer: no more batches; `error` (why the producer stopped early) reaches the consumer
    /// in place of the batches still queued, and so do the producer's row counts. The producer
    /// touches nothing shared after this.
    func finish(_ error: (any Error)? = nil, total: Int = 0, rejected: Int = 0) {
        state.withLock { state in
            state.finished = true
            state.failure = error
            state.total = total
            state.rejected = rejected
        }
    }

    /// Consumer: the next batch, or nil once the producer has finished and every batch is taken.
    ///
    /// - Throws: the producer's error.
    func receive() throws -> [Element]? {
        try state.withLock(until: { !$0.queue.isEmpty || $0.finished }) { state in
            if let failure = state.failure { throw failure }
            return state.queue.isEmpty ? nil : state.queue.removeFirst()
        }
    }

    /// The producer's counts (rows read, rows rejected), once it has finished.
    var counts: (total: Int, rejected: Int) {
        state.withLock { ($0.total, $0.rejected) }
    }

    /// Consumer: tells the producer to stop and waits until it has finished (after this the
    /// producer no longer touches anything the consumer owns).
    func cancelAndWait() {
        state.withLock { $0.cancelled = true }
        state.withLock(until: { $0.finished }) { _ in }
    }
}
