import CohortCore
import Foundation

/// Worker threads that compress ``ParallelDeflateBlock``s handed to them, in any order.
///
/// The queue, `stopping`, the engines not yet taken by a thread and every block's `isDone` live
/// in one ``ConditionLock``. A block enters the queue under the lock and leaves it under the lock
/// into exactly one worker, which alone touches the block until it sets `isDone` under the lock;
/// the writer reads the results only after seeing `isDone` under the lock. The lock therefore
/// orders every access to a block's buffers. Each engine is taken from the lock by exactly one
/// thread, which alone uses it until it exits. The writer alone restores order: blocks are
/// emitted in the order they were submitted.
final class ParallelDeflatePool: Sendable {
    private struct State {
        var queue: [ParallelDeflateBlock] = []
        var stopping = false
        var engines: [ParallelDeflateEngine]
    }

    private let state: ConditionLock<State>

    /// Starts `threads` threads, each with a deflate engine at `level` that it owns until the
    /// pool stops.
    init(level: Int, threads: Int) throws {
        let count = max(1, threads)
        var engines: [ParallelDeflateEngine] = []
        for _ in 0..<count { engines.append(try ParallelDeflateEngine(level: level)) }
        state = ConditionLock(State(engines: engines))
        for index in 0..<count {
            let thread = Thread { [self] in
                let engine = state.withLock { $0.engines.removeLast() }
                work(with: engine)
            }
            thread.name = "cohort-gzip-\(index)"
            thread.start()
        }
    }

    /// Queues `block` for compression; a worker picks it up.
    func submit(_ block: ParallelDeflateBlock) {
        state.withLock { $0.queue.append(block) }
    }

    /// Whether `block` is compressed, waiting for it first when `wait` is true.
    func isDone(_ block: ParallelDeflateBlock, wait: Bool) -> Bool {
        state.withLock(until: { _ in !wait || block.isDone }) { _ in block.isDone }
    }

    /// Tells the workers to exit once their current block is done; queued blocks are dropped.
    /// Idempotent. Workers keep the pool alive until they have exited.
    func stop() {
        state.withLock {
            $0.stopping = true
            $0.queue.removeAll()
        }
    }

    private func work(with engine: ParallelDeflateEngine) {
        while let block = next() {
            engine.compress(block)
            state.withLock { _ in block.isDone = true }
        }
    }

    /// The next queued block, or nil when the pool is stopping.
    private func next() -> ParallelDeflateBlock? {
        state.withLock(until: { !$0.queue.isEmpty || $0.stopping }) { state in
            state.stopping ? nil : state.queue.removeFirst()
        }
    }
}
