import Foundation
import Synchronization

/// A thread of its own that runs submitted jobs one at a time, in order, from a
/// ``BoundedQueue``: `submit` waits while `limit` jobs are queued, so a fast producer cannot
/// outrun it and memory stays flat. The first job that throws stops the rest (they are dropped)
/// and its error comes back from the next `submit` or from `finish`.
///
/// ``finish()`` and ``cancel()`` both return only after the thread has ended: once either has
/// returned, no job runs any more, so the caller may close or delete what the jobs wrote to (an
/// export's staging folder).
package final class SerialWorker: Sendable {
    /// A job on its way to the worker thread.
    private struct Job: @unchecked Sendable {
        // Why this is safe: a job's closure usually captures thread-confined objects (an export's
        // table and FHIR writers) that are not Sendable. ``SerialWorker/submit(_:)`` documents
        // the contract its callers keep: after submitting, the caller does not touch what the job
        // captures until ``SerialWorker/finish()`` or ``SerialWorker/cancel()`` has returned,
        // and both return only after the worker thread has ended (joined through `ended`). The
        // queue's lock orders the hand-over to the worker thread and the semaphore the way
        // back, so every access to the captured state happens on one thread at a time.
        let run: () throws -> Void
    }

    private let queue: BoundedQueue<Job>
    private let failure = Mutex<(any Error)?>(nil)
    /// Signalled once when the thread ends (and passed on by every waiter).
    private let ended = DispatchSemaphore(value: 0)

    /// Starts the thread, named `name`, with room for `limit` queued jobs.
    package init(name: String, limit: Int = 4) {
        queue = BoundedQueue(limit: limit)
        let thread = Thread { [self] in
            loop()
            ended.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Queues `job`, waiting while the queue is full. The caller must not touch anything `job`
    /// captures until ``finish()`` or ``cancel()`` has returned.
    ///
    /// - Throws: the error of an earlier job, if one failed (and then `job` is not queued).
    package func submit(_ job: @escaping () throws -> Void) throws {
        if let failure = failure.withLock({ $0 }) { throw failure }
        guard queue.send(Job(run: job)) else {
            if let failure = failure.withLock({ $0 }) { throw failure }
            return  // cancelled or finished: the job is dropped
        }
    }

    /// Waits until every queued job has run and the thread has ended.
    ///
    /// - Throws: the first job's error, if any failed.
    package func finish() throws {
        queue.close()
        join()
        if let failure = failure.withLock({ $0 }) { throw failure }
    }

    /// Drops queued jobs and waits until the thread has ended (the job running now, if any,
    /// completes first). For an abandoned export: after this no job writes anything.
    package func cancel() {
        queue.cancel()
        queue.close()
        join()
    }

    private func join() {
        ended.wait()
        ended.signal()
    }

    private func loop() {
        // Only `close()` ends this queue, never with a failure.
        while let job = try? queue.receive() {
            do {
                try job.run()
            } catch {
                failure.withLock { if $0 == nil { $0 = error } }
                queue.cancel()
            }
        }
    }
}
