import Foundation
import Testing

@testable import CohortKit

struct BatchHandoffTests {
    private struct Broken: Error {}

    /// Every batch arrives once, in order, however the two threads interleave.
    @Test func batchesArriveInOrder() throws {
        let handoff = BatchHandoff<Int>(limit: 2)
        Thread {
            for n in 0..<500 { _ = handoff.send([n, n]) }
            handoff.finish()
        }.start()
        var received: [Int] = []
        while let batch = try handoff.receive() { received += batch }
        #expect(received == (0..<500).flatMap { [$0, $0] })
    }

    /// The producer's error reaches the consumer.
    @Test func theProducersErrorReachesTheConsumer() throws {
        let handoff = BatchHandoff<Int>(limit: 4)
        Thread {
            _ = handoff.send([1])
            handoff.finish(Broken())
        }.start()
        #expect(throws: Broken.self) {
            while try handoff.receive() != nil {}
        }
    }

    /// A consumer that gives up stops a producer that is waiting on a full queue, and returns
    /// only once the producer has finished.
    @Test func cancellingStopsAWaitingProducer() {
        let handoff = BatchHandoff<Int>(limit: 1)
        let sent = Counter()
        Thread {
            var n = 0
            while handoff.send([n]) {
                n += 1
                sent.add()
            }
            handoff.finish()
        }.start()
        while sent.value < 1 { usleep(1_000) }
        handoff.cancelAndWait()
        // The queue holds one batch at most, so the producer was blocked, and it stopped.
        #expect(sent.value <= 2)
    }

    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        var value: Int { lock.withLock { count } }
        func add() { lock.withLock { count += 1 } }
    }
}
