import Foundation
import Synchronization

/// Runs independent pieces of work on several threads (files to hash, scan or compress) and
/// gives the results back in input order, so output stays deterministic however the work was
/// scheduled.
package enum Parallel {
    /// `body` applied to every item, on up to `threads` threads (default: the cores this process
    /// may use, ``Cores/available``). Items are handed out in order, one at a time, so put the
    /// largest first for the best balance. The first error thrown is rethrown after every thread
    /// has stopped; items not yet started are skipped.
    package static func map<Item: Sendable, Result: Sendable>(
        _ items: [Item], threads: Int = Cores.available, _ body: @Sendable (Item) throws -> Result
    ) throws -> [Result] {
        let workers = max(1, min(threads, items.count))
        if workers == 1 { return try items.map(body) }
        let count = items.count
        // The next item to hand out; a thread claims one by incrementing it.
        let next = Atomic<Int>(0)
        let stopped = Atomic<Bool>(false)
        let state = Mutex(State<Result>(values: Array(repeating: nil, count: count)))
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while !stopped.load(ordering: .relaxed) {
                let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard index < count else { return }
                do {
                    let value = try body(items[index])
                    state.withLock { $0.values[index] = value }
                } catch {
                    stopped.store(true, ordering: .relaxed)
                    state.withLock { if $0.error == nil { $0.error = error } }
                }
            }
        }
        return try state.withLock { state in
            if let error = state.error { throw error }
            return state.values.compactMap { $0 }
        }
    }

    /// The results so far and the first error, shared by the worker threads.
    private struct State<Result> {
        var values: [Result?]
        var error: (any Error)?
    }
}
