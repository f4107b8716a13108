import CohortIO
import Foundation

/// Worker threads that deflate the jobs handed to them, in any order: the gzip writer's blocks
/// (``GzipWriter``) and the deflate spool's (``DeflateSpool``).
///
/// Jobs travel through one unbounded ``BoundedQueue`` (the submitter limits how many it has in
/// flight); each is taken by exactly one worker, which runs `work` on it with its engine (and
/// `work` says it is done: the block's signal, or the spool's ordered write). Each thread takes
/// one engine from a second queue when it starts and alone uses it until it exits. Order is the
/// submitter's to restore.
final class ParallelDeflatePool<Job: Sendable>: Sendable {
    private let jobs = BoundedQueue<Job>(limit: nil)
    private let running = DispatchGroup()

    /// Starts `threads` threads named `name-N`, each with a deflate engine at `level` that it
    /// owns until the pool stops, running `work` on each job it takes.
    init(level: Int, threads: Int, name: String, work: @escaping @Sendable (ParallelDeflateEngine, Job) -> Void) throws {
        let count = max(1, threads)
        let engines = BoundedQueue<ParallelDeflateEngine>(limit: nil)
        for _ in 0..<count { engines.send(try ParallelDeflateEngine(level: level)) }
        engines.close()
        for index in 0..<count {
            running.enter()
            let thread = Thread { [jobs, running] in
                defer { running.leave() }
                guard let engine = (try? engines.receive()) ?? nil else { return }
                while let job = try? jobs.receive() { work(engine, job) }
            }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    /// Queues `job`; a worker picks it up. False when the pool has stopped or finished.
    @discardableResult
    func submit(_ job: Job) -> Bool {
        jobs.send(job)
    }

    /// Tells the workers to exit once their current job is done; queued jobs are dropped.
    /// Idempotent; does not wait.
    func stop() {
        jobs.cancel()
        jobs.close()
    }

    /// Lets the workers finish every queued job, then waits until they have exited. Idempotent.
    func finish() {
        jobs.close()
        running.wait()
    }
}
