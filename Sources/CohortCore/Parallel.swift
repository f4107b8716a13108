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
        let state = State<Result>(count: items.count)
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while let index = state.claim() {
                do {
                    state.store(try body(items[index]), at: index)
                } catch {
                    state.fail(error)
                }
            }
        }
        return try state.results()
    }

    /// Shared by the worker threads; every access holds `lock`.
    private final class State<Result: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var next = 0
        private let count: Int
        private var values: [Result?]
        private var error: (any Error)?

        init(count: Int) {
            self.count = count
            values = Array(repeating: nil, count: count)
        }

        func claim() -> Int? {
            lock.withLock {
                guard error == nil, next < count else { return nil }
                defer { next += 1 }
                return next
            }
        }

        func store(_ value: Result, at index: Int) {
            lock.withLock { values[index] = value }
        }

        func fail(_ error: any Error) {
            lock.withLock { if self.error == nil { self.error = error } }
        }

        func results() throws -> [Result] {
            try lock.withLock {
                if let error { throw error }
                return values.compactMap { $0 }
            }
        }
    }
}
