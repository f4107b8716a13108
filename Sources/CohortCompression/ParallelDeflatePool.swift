import CohortIO
import Foundation

/// Worker threads that compress ``ParallelDeflateBlock``s handed to them, in any order.
///
/// Blocks travel through one unbounded ``BoundedQueue`` (the writer limits how many it has in
/// flight); each is taken by exactly one worker, which signals the block when done (see
/// ``ParallelDeflateBlock``). Each thread takes one engine from a second queue when it starts
/// and alone uses it until it exits. The writer alone restores order: blocks are emitted in the
/// order they were submitted.
final class ParallelDeflatePool: Sendable {
    private let blocks = BoundedQueue<ParallelDeflateBlock>(limit: nil)

    /// Starts `threads` threads, each with a deflate engine at `level` that it owns until the
    /// pool stops.
    init(level: Int, threads: Int) throws {
        let count = max(1, threads)
        let engines = BoundedQueue<ParallelDeflateEngine>(limit: nil)
        for _ in 0..<count { engines.send(try ParallelDeflateEngine(level: level)) }
        engines.close()
        for index in 0..<count {
            let thread = Thread { [blocks] in
                guard let engine = try? engines.receive() else { return }
                while let block = try? blocks.receive() {
                    engine.compress(block)
                    block.markCompressed()
                }
            }
            thread.name = "cohort-gzip-\(index)"
            thread.start()
        }
    }

    /// Queues `block` for compression; a worker picks it up.
    func submit(_ block: ParallelDeflateBlock) {
        blocks.send(block)
    }

    /// Tells the workers to exit once their current block is done; queued blocks are dropped.
    /// Idempotent.
    func stop() {
        blocks.cancel()
        blocks.close()
    }
}
