import Foundation

/// Batches handed from one producer thread to one consumer through a bounded queue: the producer
/// waits while `limit` batches are queued, the consumer while none is. The import reads and
/// validates rows on the producer thread while the consumer (the database's writer) inserts, so
/// parsing and SQLite use both cores.
final class BatchHandoff<Element>: @unchecked Sendable {
    // Every field is guarded by `condition`.
    private let condition = NSCondition()
    private let limit: Int
    /// At most `limit` batches, so taking the first one is cheap.
    private var queue: [[Element]] = []
    private var finished = false
    private var failure: (any Error)?
    private var cancelled = false

    init(limit: Int = 8) {
        self.limit = max(1, limit)
    }

    /// Producer: queues `batch`, waiting while the queue is full. Returns false when the consumer
    /// has cancelled; the producer then stops and calls ``finish(_:)``.
    func send(_ batch: [Element]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while queue.count >= limit, !cancelled { condition.wait() }
        guard !cancelled else { return false }
        queue.append(batch)
        condition.broadcast()
        return true
    }

    /// Producer: no more batches; `error` (why the producer stopped early) reaches the consumer
    /// in place of the batches still queued. The producer touches nothing shared after this.
    func finish(_ error: (any Error)? = nil) {
        condition.lock()
        finished = true
        failure = error
        condition.broadcast()
        condition.unlock()
    }

    /// Consumer: the next batch, or nil once the producer has finished and every batch is taken.
    ///
    /// - Throws: the producer's error.
    func receive() throws -> [Element]? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty, !finished { condition.wait() }
        if let failure { throw failure }
        guard !queue.isEmpty else { return nil }
        let batch = queue.removeFirst()
        condition.broadcast()
        return batch
    }

    /// Consumer: tells the producer to stop and waits until it has finished (after this the
    /// producer no longer touches anything the consumer owns).
    func cancelAndWait() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }
}
