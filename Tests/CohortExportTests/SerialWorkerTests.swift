import Foundation
import Testing

@testable import CohortExport

struct SerialWorkerTests {
    struct Boom: Error {}

    /// Collects what the jobs did; jobs run on the worker thread, the test reads after `finish`.
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [Int] = []
        func append(_ item: Int) { lock.withLock { items.append(item) } }
        var all: [Int] { lock.withLock { items } }
    }

    @Test func jobsRunInSubmissionOrder() throws {
        let worker = SerialWorker(name: "test", limit: 2)
        let log = Log()
        for i in 0..<500 { try worker.submit { log.append(i) } }
        try worker.finish()
        #expect(log.all == Array(0..<500))
    }

    @Test func aFailedJobStopsTheRestAndItsErrorComesBack() throws {
        let worker = SerialWorker(name: "test", limit: 1)
        let log = Log()
        try worker.submit { log.append(1) }
        try worker.submit { throw Boom() }
        // Later jobs are refused with the job's error once it is known, or dropped unrun.
        for i in 2..<200 {
            do { try worker.submit { log.append(i) } } catch is Boom { break }
        }
        #expect(throws: Boom.self) { try worker.finish() }
        #expect(log.all == [1])
    }

    @Test func cancelLetsTheThreadEndWithoutRunningQueuedJobs() throws {
        let worker = SerialWorker(name: "test", limit: 4)
        let gate = NSCondition()
        nonisolated(unsafe) var open = false
        nonisolated(unsafe) var started = false
        let log = Log()
        try worker.submit {
            gate.lock()
            started = true
            gate.broadcast()
            while !open { gate.wait() }
            gate.unlock()
            log.append(0)
        }
        for i in 1..<4 { try worker.submit { log.append(i) } }
        gate.lock()
        while !started { gate.wait() }
        gate.unlock()
        worker.cancel()
        gate.lock()
        open = true
        gate.broadcast()
        gate.unlock()
        try worker.finish()
        #expect(log.all == [0], "the running job completes, the queued ones are dropped")
    }
}
