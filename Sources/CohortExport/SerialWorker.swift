import CohortCore
import Foundation

/// A thread of its own that runs submitted jobs one at a time, in order, with a bounded queue:
/// `submit` waits while `limit` jobs are queued, so a fast producer cannot outrun it and memory
/// stays flat. The first job that throws stops the rest (they are dropped) and its error comes
/// back from the next `submit` or from `finish`.
///
/// Everything shared (the queue and the flags) lives in one ``ConditionLock``; jobs run outside
/// it, on the worker thread, and each job is run by that thread alone.
final class SerialWorker: Sendable {
    private struct State {
        var jobs: [() throws -> Void] = []
        var closed = false
        var stopped = false
        var failure: (any Error)?
    }

    private let limit: Int
    private let state = ConditionLock(State())

    init(name: String, limit: Int = 4) {
        self.limit = max(1, limit)
        let thread = Thread { [self] in loop() }
        thread.name = name
        thread.start()
    }

    /// Queues `job`, waiting while the queue is full.
    ///
    /// - Throws: the error of an earlier job, if one failed (and then `job` is not queued).
    func submit(_ job: @escaping () throws -> Void) throws {
        try state.withLock(until: { $0.jobs.count < limit || $0.failure != nil || $0.stopped }) { state in
            if let failure = state.failure { throw failure }
            guard !state.closed else { return }
            state.jobs.append(job)
        }
    }

    /// Waits until every queued job has run and the thread has ended.
    ///
    /// - Throws: the first job's error, if any failed.
    func finish() throws {
        state.withLock { $0.closed = true }
        try state.withLock(until: { $0.stopped }) { state in
            if let failure = state.failure { throw failure }
        }
    }

    /// Drops queued jobs and lets the thread end (for an abandoned export); does not wait.
    func cancel() {
        state.withLock { state in
            state.closed = true
            state.jobs.removeAll()
        }
    }

    private func loop() {
        while true {
            // The next job (and whether an earlier one failed), or nil once closed and drained.
            let next: (job: () throws -> Void, skip: Bool)? = state.withLock(until: { !$0.jobs.isEmpty || $0.closed }) { state in
                if state.jobs.isEmpty {
                    state.stopped = true
                    return nil
                }
                return (state.jobs.removeFirst(), state.failure != nil)
            }
            guard let next else { return }
            guard !next.skip else { continue }
            do {
                try next.job()
            } catch {
                state.withLock { state in
                    if state.failure == nil { state.failure = error }
                    state.jobs.removeAll()
                }
            }
        }
    }
}
