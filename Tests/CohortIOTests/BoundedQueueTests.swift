import Foundation
import Synchronization
import Testing

@testable import CohortIO

struct BoundedQueueTests {
    private struct Broken: Error {}

    /// Every element arrives once, in order, however the two threads interleave.
    @Test func elementsArriveInOrder() throws {
        let queue = BoundedQueue<[Int]>(limit: 2)
        Thread {
            for n in 0..<500 { queue.send([n, n]) }
            queue.close()
        }.start()
        var received: [Int] = []
        while let batch = try queue.receive() { received += batch }
        #expect(received == (0..<500).flatMap { [$0, $0] })
        // Closed and drained: every later receive says so too.
        #expect(try queue.receive() == nil)
    }

    /// The producer never gets more than `limit` elements ahead of the receiver.
    @Test func theProducerWaitsWhileTheQueueIsFull() throws {
        let queue = BoundedQueue<Int>(limit: 3)
        let sent = Counter()
        Thread {
            for n in 0..<10 {
                queue.send(n)
                sent.add()
            }
            queue.close()
        }.start()
        // Give the producer ample time to run ahead if it could.
        Thread.sleep(forTimeInterval: 0.2)
        #expect(sent.value == 3, "three places: the fourth send waits")
        var received: [Int] = []
        while let n = try queue.receive() { received.append(n) }
        #expect(received == Array(0..<10))
    }

    /// The producer's error reaches the receiver in place of what is still queued.
    @Test func theProducersErrorReachesTheReceiver() throws {
        let queue = BoundedQueue<Int>(limit: 4)
        Thread {
            queue.send(1)
            queue.close(failure: Broken())
        }.start()
        queue.waitUntilClosed()
        #expect(throws: Broken.self) { _ = try queue.receive() }
        #expect(throws: Broken.self) { _ = try queue.receive() }
    }

    /// A receiver that gives up stops a producer that is waiting on a full queue, and
    /// `waitUntilClosed` returns only once the producer has closed the queue.
    @Test func cancellingStopsAWaitingProducer() {
        let queue = BoundedQueue<Int>(limit: 1)
        let sent = Counter()
        let closedAfterStopping = Counter()
        Thread {
            var n = 0
            while queue.send(n) {
                n += 1
                sent.add()
            }
            Thread.sleep(forTimeInterval: 0.1)
            closedAfterStopping.add()
            queue.close()
        }.start()
        while sent.value < 1 { usleep(1_000) }
        queue.cancel()
        queue.waitUntilClosed()
        // One place: the producer was blocked on the second element, and it stopped.
        #expect(sent.value == 1)
        #expect(closedAfterStopping.value == 1, "waitUntilClosed returned before the producer closed")
        #expect(!queue.send(99), "a cancelled queue refuses elements")
    }

    /// Several receivers share the elements: each is taken exactly once, and every receiver
    /// sees the end.
    @Test func severalReceiversTakeEachElementOnce() throws {
        let queue = BoundedQueue<Int>(limit: nil)
        let taken = Collected()
        let finished = DispatchGroup()
        for _ in 0..<4 {
            finished.enter()
            Thread {
                while let n = try? queue.receive() { taken.append(n) }
                finished.leave()
            }.start()
        }
        for n in 0..<1000 { queue.send(n) }
        queue.close()
        finished.wait()
        #expect(taken.all.sorted() == Array(0..<1000))
    }

    private final class Collected: Sendable {
        private let values = Mutex<[Int]>([])
        var all: [Int] { values.withLock { $0 } }
        func append(_ value: Int) { values.withLock { $0.append(value) } }
    }

    private final class Counter: Sendable {
        private let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
        func add() { count.withLock { $0 += 1 } }
    }
}
