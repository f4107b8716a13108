import Foundation
import Testing

@testable import CohortIO

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

    /// `cancel` drops the queued jobs and returns only after the running one has ended: an
    /// abandoned export removes its staging folder right after, and no job may write into it
    /// (or recreate it) later.
    @Test func cancelWaitsForTheRunningJobSoNothingWritesAfterTheStagingFolderIsGone() throws {
        let staging = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-worker-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: staging) }
        let worker = SerialWorker(name: "test", limit: 4)
        let started = DispatchSemaphore(value: 0)
        let log = Log()
        try worker.submit {
            started.signal()
            // A slow job, still writing when the export is abandoned.
            Thread.sleep(forTimeInterval: 0.3)
            try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
            try Data("late".utf8).write(to: staging.appendingPathComponent("table.csv"))
            log.append(0)
        }
        for i in 1..<4 { try worker.submit { log.append(i) } }
        started.wait()
        worker.cancel()
        #expect(log.all == [0], "cancel returned before the running job ended, or ran the queued ones")
        try FileManager.default.removeItem(at: staging)
        Thread.sleep(forTimeInterval: 0.4)
        #expect(!FileManager.default.fileExists(atPath: staging.path), "a worker wrote after the staging folder was removed")
        try worker.finish()
        #expect(log.all == [0])
    }
}
