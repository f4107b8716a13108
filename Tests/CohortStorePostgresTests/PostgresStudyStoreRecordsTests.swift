import CohortCore
import CohortPostgres
import CohortStore
import CohortStorePostgres
import Foundation
import Testing

@Suite(.enabled(if: PostgresFixture.enabled, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
struct PostgresStudyStoreRecordsTests {
    static let info = ImportBatchInfo(fileName: "records.csv", fileSHA256: String(repeating: "b", count: 64), format: "csv")
    struct BadRow: Error {}

    func record(_ id: UUID, _ kind: RecordKind = .steps, minute: Int64, source: String = "band") -> CohortCore.Record {
        CohortCore.Record(
            participantID: id, kind: kind, start: Timestamp(epochMilliseconds: 1_767_225_600_000 + minute * 60_000), value: Double(minute), source: source)
    }

    func tableCounts(_ sql: PostgresConnection) throws -> [Int] {
        try ["records", "import_batches", "audit_events", "redactable_texts"].map { try PostgresFixture.integer(sql, "SELECT count(*) FROM \($0)") }
    }

    @Test func aFileWithABadRowImportsNothing() throws {
        let (store, sql, _) = try PostgresFixture.store()
        let a = try PostgresFixture.participant(sql, code: "P-0001")
        let before = try tableCounts(sql)
        // The importer refuses the file after 60k rows were already COPYed (one chunk written).
        #expect(throws: BadRow.self) {
            try store.importBatch(Self.info, actor: "coordinator", at: Date()) { sink in
                for minute in Int64(0)..<60_000 { try sink.add(record(a.id, minute: minute), participant: a.handle) }
                throw BadRow()
            }
        }
        #expect(try tableCounts(sql) == before)
        // The server refuses a row (its participant does not exist): nothing of the file either.
        let ghost = try PostgresFixture.participant(sql, code: "P-0002")
        try sql.query("DELETE FROM participants WHERE code = 'P-0002'")
        #expect(throws: CohortError.self) {
            try store.importBatch(Self.info, actor: "coordinator", at: Date()) { sink in
                for minute in Int64(0)..<1000 { try sink.add(record(a.id, minute: minute), participant: a.handle) }
                try sink.add(record(ghost.id, minute: 1), participant: ghost.handle)
                try sink.flush()
                return (1001, sink.insertedCount, 0, 0)
            }
        }
        #expect(try tableCounts(sql) == before)
        // The connection is usable afterwards (the staging table went with the transaction).
        let after = try store.importBatch(Self.info, actor: "coordinator", at: Date()) { sink in
            try sink.add(record(a.id, minute: 1), participant: a.handle)
            try sink.flush()
            return (1, sink.insertedCount, 0, 0)
        }
        #expect(after.inserted == 1)
        #expect(try store.counts()["records"] == 1)
        #expect(try store.counts()["import_batches"] == 1)
    }

    @Test func twoImportsAtOnceOnTwoConnectionsStoreEverything() throws {
        let (first, sql, url) = try PostgresFixture.store()
        let second = try PostgresStudyStore(url: url, piiKey: PostgresFixture.piiKey)
        let people = try (1...4).map { try PostgresFixture.participant(sql, code: "P-000\($0)") }
        let perImport = 80_000
        let stores = [first, second]
        let results = ImportResults()
        let group = DispatchGroup()
        for (n, store) in stores.enumerated() {
            group.enter()
            Thread {
                defer { group.leave() }
                do {
                    let result = try store.importBatch(Self.info, actor: "coordinator-\(n)", at: Date()) { sink in
                        // Each import writes its own two participants, plus 1000 rows of a participant the other writes too.
                        for i in 0..<perImport {
                            let who = people[n * 2 + i % 2]
                            try sink.add(record(who.id, minute: Int64(i / 2)), participant: who.handle)
                        }
                        for minute in Int64(0)..<1000 { try sink.add(record(people[0].id, minute: minute, source: "shared"), participant: people[0].handle) }
                        try sink.flush()
                        return (perImport + 1000, sink.insertedCount, perImport + 1000 - sink.insertedCount, 0)
                    }
                    results.add(result)
                } catch {
                    results.fail(error)
                }
            }.start()
        }
        group.wait()
        #expect(results.errors.isEmpty)
        let all = results.all
        #expect(all.count == 2)
        // Every row of both files is stored once; the 1000 shared rows went to whichever import came first.
        #expect(try PostgresFixture.integer(sql, "SELECT count(*) FROM records") == 2 * perImport + 1000)
        #expect(all.map(\.inserted).reduce(0, +) == 2 * perImport + 1000)
        #expect(all.map(\.duplicates).reduce(0, +) == 1000)
        for result in all {
            #expect(try PostgresFixture.integer(sql, "SELECT count(*) FROM records WHERE batch_id = \(result.batchID)") == result.inserted)
        }
        // The two audit events are consecutive links of one chain.
        let events = try sql.query("SELECT seq, prev_hash, hash FROM audit_events ORDER BY seq")
        #expect(events.map { $0[0] } == ["1", "2"])
        #expect(events[1][1] == events[0][2])
    }

    /// Two imports of the same records in opposite orders, each holding the half the other needs
    /// next: a deadlock, which the server breaks by cancelling one. That one stores nothing and
    /// says so (a conflict, run it again); the other stores every record once.
    @Test func twoImportsOfTheSameRecordsInOppositeOrdersDeadlockAndOneEndsCleanly() throws {
        let (first, sql, url) = try PostgresFixture.store()
        let second = try PostgresStudyStore(url: url, piiKey: PostgresFixture.piiKey)
        let a = try PostgresFixture.participant(sql, code: "P-0001")
        let minutes = Array(Int64(0)..<20_000)
        let orders = [minutes, Array(minutes.reversed())]
        let halfway = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
        let results = ImportResults()
        let group = DispatchGroup()
        for (n, store) in [first, second].enumerated() {
            group.enter()
            Thread {
                defer { group.leave() }
                do {
                    let result = try store.importBatch(Self.info, actor: "coordinator-\(n)", at: Date()) { sink in
                        for minute in orders[n].prefix(10_000) { try sink.add(record(a.id, minute: minute), participant: a.handle) }
                        try sink.flush()  // its first half is in the table, locked until commit
                        halfway[n].signal()
                        halfway[1 - n].wait()  // the other holds its first half: the second halves collide
                        for minute in orders[n].suffix(10_000) { try sink.add(record(a.id, minute: minute), participant: a.handle) }
                        try sink.flush()
                        return (20_000, sink.insertedCount, 20_000 - sink.insertedCount, 0)
                    }
                    results.add(result)
                } catch {
                    results.fail(error, as: error as? CohortError)
                }
            }.start()
        }
        group.wait()
        #expect(results.all.count == 1, "one import finished")
        #expect(results.all.first?.inserted == 20_000)
        let refused = try #require(results.refusals.first)
        #expect(refused.code == .conflict)
        #expect(refused.message.contains("cancelled this one"))
        #expect(refused.hint?.contains("run it again") == true)
        #expect(try PostgresFixture.integer(sql, "SELECT count(*) FROM records") == 20_000)
        #expect(try PostgresFixture.integer(sql, "SELECT count(*) FROM import_batches") == 1)
        #expect(try PostgresFixture.integer(sql, "SELECT count(*) FROM audit_events WHERE action = 'data.import'") == 1)
    }

    @Test func forEachRecordStreamsInStartOrderWithFlatMemory() throws {
        let (store, sql, _) = try PostgresFixture.store()
        let a = try PostgresFixture.participant(sql, code: "P-0001")
        let b = try PostgresFixture.participant(sql, code: "P-0002")
        let total = 400_000
        // Written newest first, two kinds per minute, so the read order is the index's work, not insertion order.
        _ = try store.importBatch(Self.info, actor: "coordinator", at: Date()) { sink in
            for i in stride(from: total / 2 - 1, through: 0, by: -1) {
                try sink.add(record(a.id, .steps, minute: Int64(i)), participant: a.handle)
                try sink.add(record(a.id, .heartRate, minute: Int64(i)), participant: a.handle)
            }
            try sink.add(record(b.id, minute: 5), participant: b.handle)
            try sink.flush()
            return (total + 1, sink.insertedCount, 0, 0)
        }
        let baseline = residentBytes()
        var peak = baseline
        var seen = 0
        var previous: (Int64, String)?
        var ordered = true
        try store.forEachRecord(a.handle, participantID: a.id) { record in
            let key = (record.start.epochMilliseconds, record.kind.rawValue)
            if let previous, !(previous < key) { ordered = false }
            previous = key
            seen += 1
            if seen % 50_000 == 0 { peak = max(peak, residentBytes()) }
        }
        #expect(seen == total)
        #expect(ordered)
        // 400k records held at once would be well over 100 MB (libpq's result plus the Swift
        // rows); streamed 10k at a time the process grows by a few MB. (cohort-bench checks
        // 10M on an export.)
        let growth = peak - baseline
        #expect(growth < 32 << 20, "resident memory grew by \(growth >> 20) MB while streaming")
        var starts = 0
        var ofB = 0
        try store.forEachRecordStart { handle, _, _ in
            starts += 1
            if handle == b.handle { ofB += 1 }
        }
        #expect(starts == total + 1)
        #expect(ofB == 1)
        #expect(try store.recordCount(b.handle) == 1)
        // The per-participant read is an index scan in output order (no sort of the participant's rows).
        try sql.query("ANALYZE records")
        let plan = try sql.query(
            "EXPLAIN SELECT id FROM records WHERE participant_pk = 1 ORDER BY start_ms, kind, source")
            .compactMap { $0.first ?? nil }.joined(separator: "\n")
        #expect(plan.contains("records_key"))
        #expect(!plan.contains("Sort"))
    }

    /// The process's resident set (VmRSS), in bytes.
    func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
        }
        return 0
    }
}

/// Results collected from import threads.
final class ImportResults: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var results: [ImportBatchResult] = []
    private var failures: [String] = []
    private var cohortErrors: [CohortError] = []

    func add(_ result: ImportBatchResult) { lock.withLock { results.append(result) } }
    func fail(_ error: any Error, as cohortError: CohortError? = nil) {
        lock.withLock {
            failures.append(String(describing: error))
            if let cohortError { cohortErrors.append(cohortError) }
        }
    }
    var all: [ImportBatchResult] { lock.withLock { results } }
    var errors: [String] { lock.withLock { failures } }
    /// The failures that were `CohortError`s.
    var refusals: [CohortError] { lock.withLock { cohortErrors } }
}
