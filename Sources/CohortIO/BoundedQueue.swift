import DequeModule
import Dispatch
import Synchronization

/// A bounded first-in-first-out queue between threads: ``send(_:)`` waits while `limit`
/// elements are queued, ``receive()`` while none is. The one queue cohort's threads share work
/// through: the import's reader hands validated batches to the database writer, each
/// ``SerialWorker`` takes its jobs from one, and the parallel gzip workers their blocks.
///
/// Elements move: an element is sent (`sending`, so the sender keeps no reference it could still
/// use) and received by exactly one receiver; the compiler checks both ends. The state (a `Deque`
/// and three flags) lives in a standard-library `Mutex`; threads wait on semaphores counting free
/// places and queued elements, never while holding the lock.
///
/// Ends: the producer calls ``close(failure:)`` when it has nothing more (its error, if it
/// stopped early, reaches the receiver in place of the elements still queued); the receiver (or
/// whoever abandons the work) calls ``cancel()`` to drop what is queued and make every later
/// ``send(_:)`` return false.
package final class BoundedQueue<Element>: Sendable {
    /// One element in transit, in a mutex of its own: a value enters a `Mutex` through its
    /// initializer (`sending`) and leaves through `withLock` (`sending` again), which lets
    /// non-Sendable elements cross threads checked by the compiler.
    private final class Slot: Sendable {
        private let value: Mutex<Element?>

        init(_ element: sending Element) {
            value = Mutex(element)
        }

        func take() -> sending Element? {
            value.withLock { $0.take() }
        }
    }

    private struct State {
        var elements = Deque<Slot>()
        var closed = false
        var cancelled = false
        var failure: (any Error)?
    }

    /// What a receiver found after being woken.
    private enum Step {
        case element(Slot)
        case failed(any Error)
        case ended
        /// The wake-up was for an element that ``cancel()`` dropped.
        case again
    }

    private let state = Mutex(State())
    /// Free places; nil when the queue is unbounded.
    private let places: DispatchSemaphore?
    /// One permit per queued element, plus one (passed on by every receiver that sees it) once
    /// the queue is closed.
    private let available = DispatchSemaphore(value: 0)
    /// Signalled once the queue is closed (and passed on by every waiter).
    private let closedSignal = DispatchSemaphore(value: 0)

    /// A queue holding at most `limit` elements (at least 1); nil: unbounded (the producer
    /// limits what it has in flight itself).
    package init(limit: Int?) {
        // Created at zero and raised: libdispatch refuses to free a semaphore whose count is
        // below the value it was created with, which a cancelled queue can leave behind.
        places = limit.map { limit in
            let places = DispatchSemaphore(value: 0)
            for _ in 0..<max(1, limit) { places.signal() }
            return places
        }
    }

    /// Producer: queues `element`, waiting while the queue is full.
    ///
    /// - Returns: false (and `element` is dropped) when the queue was cancelled or closed.
    @discardableResult
    package func send(_ element: sending Element) -> Bool {
        places?.wait()
        // Moved, not copied: a copy would keep the element referenced here until `send` returns,
        // after the receiver may already hold it — then a receiver that empties a buffer it
        // takes for its own (the export's `ChunkPool`) finds it shared and allocates a new one.
        let slot = Slot(consume element)
        let accepted = state.withLock { state -> Bool in
            guard !state.cancelled, !state.closed else { return false }
            state.elements.append(slot)
            return true
        }
        if accepted {
            available.signal()
        } else {
            // Pass the place on: a cancelled queue lets every later sender through at once.
            places?.signal()
        }
        return accepted
    }

    /// Producer: nothing more will be sent. `failure` (why the producer stopped early) is thrown
    /// by the next ``receive()`` in place of the elements still queued. Later calls do nothing.
    package func close(failure: (any Error)? = nil) {
        let first = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.closed = true
            state.failure = failure
            return true
        }
        guard first else { return }
        available.signal()
        closedSignal.signal()
    }

    /// Receiver: the next element, waiting until there is one; nil once the queue is closed and
    /// every element taken (or dropped by ``cancel()``).
    ///
    /// - Throws: the failure the producer closed the queue with.
    package func receive() throws -> sending Element? {
        while true {
            available.wait()
            let step = state.withLock { state -> Step in
                if let failure = state.failure { return .failed(failure) }
                if let element = state.elements.popFirst() { return .element(element) }
                return state.closed ? .ended : .again
            }
            switch step {
            case .element(let slot):
                places?.signal()
                guard let element = slot.take() else { continue }  // never: each slot is taken once
                return element
            case .failed(let failure):
                available.signal()
                throw failure
            case .ended:
                available.signal()
                return nil
            case .again:
                continue
            }
        }
    }

    /// Drops every queued element and makes later ``send(_:)`` calls return false at once (a
    /// producer waiting for a place is woken). Does not close the queue.
    package func cancel() {
        state.withLock { state in
            state.cancelled = true
            state.elements.removeAll()
        }
        places?.signal()
    }

    /// Whether ``cancel()`` was called.
    package var isCancelled: Bool {
        state.withLock { $0.cancelled }
    }

    /// Waits until the producer has closed the queue (after which it touches nothing shared).
    package func waitUntilClosed() {
        closedSignal.wait()
        closedSignal.signal()
    }
}
