import Foundation

/// A thread of its own that runs submitted jobs one at a time, in order, with a bounded queue:
/// `submit` waits while `limit` jobs are queued, so a fast producer cannot outrun it and memory
/// stays flat. The first job that throws stops the rest (they are dropped) and its error comes
/// back from the next `submit` or from `finish`.
///
/// Lock discipline (hence `@unchecked Sendable`): every stored property except `limit` is read
/// and written only while `condition` is locked; jobs run outside the lock, on the worker thread.
final class SerialWorker: @unchecked Sendable {
    private let condition = NSCondition()
    private let limit: Int
    private var jobs: [() throws -> Void] = []
    private var closed = false
    private var stopped = false
    private var failure: (any Error)?

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
        condition.lock()
        defer { condition.unlock() }
        while jobs.count >= limit, failure == nil, !stopped { condition.wait() }
        if let failure { throw failure }
        guard !closed else { return }
        jobs.append(job)
        condition.broadcast()
    }

    /// Waits until every queued job has run and the thread has ended.
    ///
    /// - Throws: the first job's error, if any failed.
    func finish() throws {
        condition.lock()
        defer { condition.unlock() }
        closed = true
        condition.broadcast()
        while !stopped { condition.wait() }
        if let failure { throw failure }
    }

    /// Drops queued jobs and lets the thread end (for an abandoned export); does not wait.
    func cancel() {
        condition.lock()
        closed = true
        jobs.removeAll()
        condition.broadcast()
        condition.unlock()
    }

    private func loop() {
        while true {
            condition.lock()
            while jobs.isEmpty, !closed { condition.wait() }
            if jobs.isEmpty {
                stopped = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            let skip = failure != nil
            condition.broadcast()
            condition.unlock()
            guard !skip else { continue }
            do {
                try job()
            } catch {
                condition.lock()
                if failure == nil { failure = error }
                jobs.removeAll()
                condition.broadcast()
                condition.unlock()
            }
        }
    }
}
