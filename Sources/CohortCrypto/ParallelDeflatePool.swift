import Foundation

/// Worker threads that compress ``ParallelDeflateBlock``s handed to them, in any order.
///
/// Lock discipline (hence `@unchecked Sendable`): `queue`, `stopping` and every block's
/// `isDone` are read and written only while holding `condition`. A block enters the queue under
/// the lock and leaves it under the lock into exactly one worker, which alone touches the block
/// until it sets `isDone` under the lock; the writer reads the results only after seeing
/// `isDone` under the lock. The lock therefore orders every access to a block's buffers.
/// The writer alone restores order: blocks are emitted in the order they were submitted.
final class ParallelDeflatePool: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [ParallelDeflateBlock] = []
    private var stopping = false

    /// Starts one thread per engine; each thread owns its engine until the pool stops.
    init(engines: [ParallelDeflateEngine]) {
        for (index, engine) in engines.enumerated() {
            let thread = Thread { [self] in self.work(with: engine) }
            thread.name = "cohort-gzip-\(index)"
            thread.start()
        }
    }

    /// Queues `block` for compression; a worker picks it up.
    func submit(_ block: ParallelDeflateBlock) {
        condition.lock()
        queue.append(block)
        // Broadcast, not signal: the writer waits on the same condition and must not be the
        // only one woken.
        condition.broadcast()
        condition.unlock()
    }

    /// Whether `block` is compressed, waiting for it first when `wait` is true.
    func isDone(_ block: ParallelDeflateBlock, wait: Bool) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while wait && !block.isDone { condition.wait() }
        return block.isDone
    }

    /// Tells the workers to exit once their current block is done; queued blocks are dropped.
    /// Idempotent. Workers keep the pool alive until they have exited.
    func stop() {
        condition.lock()
        stopping = true
        queue.removeAll()
        condition.broadcast()
        condition.unlock()
    }

    private func work(with engine: ParallelDeflateEngine) {
        while let block = next() {
            engine.compress(block)
            condition.lock()
            block.isDone = true
            condition.broadcast()
            condition.unlock()
        }
    }

    /// The next queued block, or nil when the pool is stopping.
    private func next() -> ParallelDeflateBlock? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !stopping { condition.wait() }
        guard !stopping else { return nil }
        return queue.removeFirst()
    }
}
