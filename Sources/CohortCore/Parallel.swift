public import Foundation

/// Runs independent pieces of work on several threads (files to hash, scan or compress) and
/// gives the results back in input order, so output stays deterministic however the work was
/// scheduled.
public enum Parallel {
    /// `body` applied to every item, on up to `threads` threads (default: the active processor
    /// count). Items are handed out in order, one at a time, so put the largest first for the
    /// best balance. The first error thrown is rethrown after every thread has stopped; items not
    /// yet started are skipped.
    public static func map<Item: Sendable, Result: Sendable>(
        _ items: [Item], threads: Int = ProcessInfo.processInfo.activeProcessorCount, _ body: @Sendable (Item) throws -> Result
    ) throws -> [Result] {
        let workers = max(1, min(threads, items.count))
        if workers == 1 { return try items.map(body) }
        let count = items.count
        let state = ConditionLock(State<Result>(values: Array(repeating: nil, count: count)))
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while let index = state.withLock({ $0.claim(count: count) }) {
                do {
                    let value = try body(items[index])
                    state.withLock { $0.values[index] = value }
                } catch {
                    state.withLock { if $0.error == nil { $0.error = error } }
                }
            }
        }
        return try state.withLock { state in
            if let error = state.error { throw error }
            return state.values.compactMap { $0 }
        }
    }

    /// Shared by the worker threads, inside a ``ConditionLock``.
    private struct State<Result> {
        var next = 0
        var values: [Result?]
        var error: (any Error)?

        /// The next item's index, or nil once every item is handed out or one has failed.
        mutating func claim(count: Int) -> Int? {
            guard error == nil, next < count else { return nil }
            defer { next += 1 }
            return next
        }
    }
}
