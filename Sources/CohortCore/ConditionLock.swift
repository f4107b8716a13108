import Foundation

/// State guarded by a lock with a condition variable: the threading primitive the bounded queues,
/// worker pools and parallel maps are built on. The state is read and changed only inside
/// ``withLock(until:_:)``, which can first wait until another thread has changed it.
public final class ConditionLock<State>: @unchecked Sendable {
    // Why this is safe (the one place cohort vouches for thread safety by hand):
    // - `state` is private and touched only in `withLock`, between `condition.lock()` and
    //   `condition.unlock()`, so no two threads ever access it at once;
    // - it enters through `init(_:)`, which takes it `sending` (no other reference stays with the
    //   caller), like the standard library's `Mutex`;
    // - `NSCondition` is itself thread-safe.
    // What `body` returns leaves the lock: callers hand out a value (a job, a block) only when
    // that hand-off is the point, and the owning type documents who uses it afterwards.
    private let condition = NSCondition()
    private var state: State

    /// A lock guarding `state`.
    public init(_ state: sending State) {
        self.state = state
    }

    /// Runs `body` on the state under the lock, after waiting (the lock released meanwhile)
    /// until `ready` holds; wakes every waiting thread afterwards, since `body` may have changed
    /// what they wait for.
    public func withLock<Result>(until ready: (State) -> Bool = { _ in true }, _ body: (inout State) throws -> Result) rethrows -> Result {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        while !ready(state) { condition.wait() }
        return try body(&state)
    }
}
