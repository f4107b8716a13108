import Foundation
import Testing

@testable import CohortCore

/// The one hand-checked threading primitive: every change under the lock is seen by every
/// thread, and a waiter wakes once another thread makes its condition true.
struct ConditionLockTests {
    @Test func incrementsFromManyThreadsAreNeverLost() {
        let counter = ConditionLock(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<10_000 { counter.withLock { $0 += 1 } }
        }
        #expect(counter.withLock { $0 } == 80_000)
    }

    @Test func aWaiterWakesWhenAnotherThreadMakesItsConditionTrue() {
        let gate = ConditionLock((open: false, seen: 0))
        let waiter = Thread {
            gate.withLock(until: { $0.open }) { $0.seen += 1 }
        }
        waiter.start()
        gate.withLock { $0.open = true }
        // The waiter's body runs exactly once, after the gate opened.
        let seen = gate.withLock(until: { $0.seen == 1 }) { $0.seen }
        #expect(seen == 1)
    }
}
