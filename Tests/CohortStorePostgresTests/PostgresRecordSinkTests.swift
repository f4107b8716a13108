import CohortCore
import CohortPostgres
import CohortStore
import CohortStorePostgres
import Foundation
import Testing

@Suite(.enabled(if: PostgresFixture.enabled, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
struct PostgresRecordSinkTests {
    static let info = ImportBatchInfo(fileName: "records.csv", fileSHA256: String(repeating: "a", count: 64), format: "csv")

    func record(_ id: UUID, _ kind: RecordKind = .heartRate, minute: Int64, value: Double? = 60, text: String? = nil, source: String? = "watch", note: String? = nil)
        -> CohortCore.Record
    {
        CohortCore.Record(
            participantID: id, kind: kind, start: Timestamp(epochMilliseconds: 1_767_225_600_000 + minute * 60_000, utcOffsetSeconds: 3600),
            value: value, text: text, source: source, note: note)
    }

    @Test func copyStoresRecordsWithNotesAndCountsDuplicatesAsSQLFinds() throws {
        let (store, sql, _) = try PostgresFixture.store()
        let a = try PostgresFixture.participant(sql, code: "P-0001")
        let b = try PostgresFixture.participant(sql, code: "P-0002")
        // Text that COPY's text format would have to escape: tab, newline, backslash, \N, quotes, non-ASCII.
        let awkward = "tab\there\nnew line \\ back \\N \"q\" ünïcødé ✓"
        // 120k rows so the COPY runs in more than one chunk; every 10th row repeats an earlier one
        // (same participant, kind, start, source) with another value.
        var expectedNew = 0
        let first = try store.importBatch(Self.info, actor: "coordinator", at: Date()) { sink in
            var total = 0
            for i in 0..<120_000 {
                let who = i % 2 == 0 ? a : b
                let minute = Int64(i / 2)
                if i % 10 == 9 {
                    try sink.add(record(who.id, minute: minute - 3, value: -1), participant: who.handle)
                } else {
                    expectedNew += 1
                    try sink.add(record(who.id, minute: minute, value: Double(i)), participant: who.handle)
                }
                total += 1
            }
            try sink.add(record(a.id, .pain, minute: 999_999, value: 3, text: awkward, source: nil, note: "slept badly, call Jane at home"), participant: a.handle)
            expectedNew += 1
            total += 1
            try sink.flush()
            return (total, sink.insertedCount, total - sink.insertedCount, 0)
        }
        #expect(first.inserted == expectedNew)
        #expect(first.duplicates == 120_001 - expectedNew)
        // Recomputed by SQL: the rows of this batch, and no row with the duplicates' value.
        #expect(try PostgresFixture.integer(sql, "SELECT count(*) FROM records WHERE batch_id = \(first.batchID)") == expectedNew)
        #expect(try PostgresFixture.integer(sql, "SELECT count(*) FROM records WHERE value = -1") == 0)
        #expect(try PostgresFixture.integer(sql, "SELECT rows_inserted FROM import_batches WHERE id = \(first.batchID)") == expectedNew)
        // The note is sealed at rest: its text is nowhere in the table.
        #expect(try PostgresFixture.integer(sql, "SELECT count(*) FROM records WHERE note_enc IS NOT NULL") == 1)
        #expect(try PostgresFixture.integer(sql, "SELECT count(*) FROM records WHERE position(convert_to('Jane', 'UTF8') in note_enc) > 0 OR text LIKE '%Jane%'") == 0)
        // Read back: the awkward text and the note as they were.
        var painRecords: [CohortCore.Record] = []
        try store.forEachRecord(a.handle, participantID: a.id) { if $0.kind == .pain { painRecords.append($0) } }
        #expect(painRecords.count == 1)
        #expect(painRecords.first?.text == awkward)
        #expect(painRecords.first?.note == "slept badly, call Jane at home")
        #expect(painRecords.first?.source == nil)
        #expect(painRecords.first?.start.utcOffsetSeconds == 3600)

        // A second import of overlapping rows: only the new ones are stored.
        let second = try store.importBatch(Self.info, actor: "coordinator", at: Date()) { sink in
            for minute in Int64(59_990)..<60_010 { try sink.add(record(a.id, minute: minute), participant: a.handle) }
            try sink.flush()
            return (20, sink.insertedCount, 20 - sink.insertedCount, 0)
        }
        #expect(second.inserted == 10)
        #expect(try PostgresFixture.integer(sql, "SELECT count(*) FROM records WHERE batch_id = \(second.batchID)") == 10)
        #expect(try store.recordCount(nil) == expectedNew + 10)
        #expect(try store.recordCount(a.handle) == PostgresFixture.integer(sql, "SELECT count(*) FROM records r JOIN participants p ON p.pk = r.participant_pk WHERE p.code = 'P-0001'"))
        // The audit trail has one data.import event per batch with the counts.
        let details = try sql.query("SELECT details->>'inserted', details->>'duplicates', subject FROM audit_events WHERE action = 'data.import' ORDER BY seq")
        #expect(details.map { $0[0] } == [String(expectedNew), "10"])
        #expect(details.map { $0[1] } == [String(120_001 - expectedNew), "10"])
        #expect(details.map { $0[2] } == ["batch-\(first.batchID)", "batch-\(second.batchID)"])
    }

    @Test func insertAnswersWhetherTheRowWasNewAndWritesQueuedRowsFirst() throws {
        let (store, sql, _) = try PostgresFixture.store()
        let a = try PostgresFixture.participant(sql, code: "P-0001")
        var answers: [Bool] = []
        _ = try store.importBatch(Self.info, actor: "coordinator", at: Date()) { sink in
            try sink.add(record(a.id, minute: 1), participant: a.handle)  // queued
            answers.append(try sink.insert(record(a.id, minute: 1, value: 99), participant: a.handle))  // duplicate of the queued one
            answers.append(try sink.insert(record(a.id, minute: 2, note: "a note"), participant: a.handle))
            answers.append(try sink.insert(record(a.id, minute: 2), participant: a.handle))
            answers.append(try sink.insert(record(a.id, minute: 2, source: "phone"), participant: a.handle))  // another source: new
            return (5, 3, 2, 0)
        }
        #expect(answers == [false, true, false, true])
        #expect(try PostgresFixture.integer(sql, "SELECT count(*) FROM records") == 3)
        #expect(try PostgresFixture.integer(sql, "SELECT count(*) FROM records WHERE value = 99") == 0)
        var notes: [String] = []
        try store.forEachRecord(a.handle, participantID: a.id) { if let n = $0.note { notes.append(n) } }
        #expect(notes == ["a note"])
    }
}

extension PostgresRecordSinkTests {
    @Test func aRecordAnotherCoordinatorStoresMeanwhileCountsAsADuplicate() throws {
        let (store, sql, url) = try PostgresFixture.store()
        let a = try PostgresFixture.participant(sql, code: "P-0001")
        // Another coordinator has stored minute 7 in a transaction not committed yet.
        let other = try PostgresConnection(url: url)
        try other.query("BEGIN")
        try other.query(
            "INSERT INTO records (participant_pk, kind, start_ms, start_offset, value, source) SELECT pk, 'heart_rate', $1, 3600, 1, 'watch' FROM participants",
            [String(record(a.id, minute: 7).start.epochMilliseconds)])
        let outcome = ImportOutcome()
        let done = DispatchSemaphore(value: 0)
        Thread {
            defer { done.signal() }
            outcome.set(
                Result {
                    try store.importBatch(Self.info, actor: "coordinator", at: Date()) { sink in
                        for minute in Int64(0)..<20 { try sink.add(record(a.id, minute: minute), participant: a.handle) }
                        try sink.flush()
                        return (20, sink.insertedCount, 20 - sink.insertedCount, 0)
                    }
                })
        }.start()
        // The import waits for the other transaction on that record's key, then skips it.
        Thread.sleep(forTimeInterval: 1)
        try other.query("COMMIT")
        done.wait()
        let result = try #require(outcome.value).get()
        #expect(result.inserted == 19)
        #expect(result.duplicates == 1)
        #expect(try PostgresFixture.integer(sql, "SELECT count(*) FROM records") == 20)
        #expect(try PostgresFixture.integer(sql, "SELECT count(*) FROM records WHERE batch_id = \(result.batchID)") == 19)
    }
}

extension PostgresRecordSinkTests {
    /// New records go straight into `records`; the first chunk holding a stored record is rolled
    /// back and goes, with the rest of the file, through the staging table. Counts recomputed by SQL.
    @Test func chunksGoStraightIntoRecordsUntilOneHoldsAStoredRecord() throws {
        let (store, sql, _) = try PostgresFixture.store()
        let a = try PostgresFixture.participant(sql, code: "P-0001")
        let b = try PostgresFixture.participant(sql, code: "P-0002")
        var staged = -1
        let first = try store.importBatch(Self.info, actor: "coordinator", at: Date()) { sink in
            for i in 0..<120_000 {
                let who = i < 60_000 ? a : b
                try sink.add(record(who.id, minute: Int64(i % 60_000), note: i == 70_000 ? "a note" : nil), participant: who.handle)
            }
            try sink.flush()
            staged = (sink as? PostgresRecordSink)?.stagedChunks ?? -1
            return (120_000, sink.insertedCount, 120_000 - sink.insertedCount, 0)
        }
        #expect(staged == 0)
        #expect(first.inserted == 120_000)
        #expect(try PostgresFixture.integer(sql, "SELECT count(*) FROM records WHERE batch_id = \(first.batchID)") == 120_000)
        // Second file: 50k new rows of participant a (direct); a chunk with one stored record of
        // b among new ones (rolled back, staged); a chunk with a row repeated inside it (the
        // repeat is dropped on the spot, the first one wins: direct again).
        let second = try store.importBatch(Self.info, actor: "coordinator", at: Date()) { sink in
            for minute in Int64(100_000)..<150_000 { try sink.add(record(a.id, minute: minute), participant: a.handle) }
            for minute in Int64(200_000)..<249_999 { try sink.add(record(b.id, minute: minute), participant: b.handle) }
            try sink.add(record(b.id, minute: 5, value: -1), participant: b.handle)
            try sink.add(record(a.id, minute: 300_000, value: 1), participant: a.handle)
            try sink.add(record(a.id, minute: 300_000, value: -1), participant: a.handle)
            try sink.flush()
            staged = (sink as? PostgresRecordSink)?.stagedChunks ?? -1
            return (100_002, sink.insertedCount, 100_002 - sink.insertedCount, 0)
        }
        #expect(staged == 1)
        #expect(second.inserted == 100_000)
        #expect(try PostgresFixture.integer(sql, "SELECT count(*) FROM records WHERE batch_id = \(second.batchID)") == 100_000)
        #expect(try PostgresFixture.integer(sql, "SELECT count(*) FROM records WHERE value = -1") == 0)
        #expect(try PostgresFixture.integer(sql, "SELECT count(*) FROM records") == 220_000)
        var notes: [String] = []
        try store.forEachRecord(b.handle, participantID: b.id) { if let n = $0.note { notes.append(n) } }
        #expect(notes == ["a note"])
    }

    /// An import holds the lock a foreign key would take on each participant it wrote, so an
    /// erase (`FOR UPDATE`) waits for it; a participant it did not write stays free.
    @Test func anImportLocksTheParticipantsItWrote() throws {
        let (store, sql, _) = try PostgresFixture.store()
        let a = try PostgresFixture.participant(sql, code: "P-0001")
        let b = try PostgresFixture.participant(sql, code: "P-0002")
        func lockState(_ pk: Int64) -> String {
            do {
                try sql.transaction { _ = try sql.query("SELECT pk FROM participants WHERE pk = $1 FOR UPDATE NOWAIT", [String(pk)]) }
                return "free"
            } catch {
                return PostgresConnection.sqlState(of: error) ?? "\(error)"
            }
        }
        var during: [String] = []
        _ = try store.importBatch(Self.info, actor: "coordinator", at: Date()) { sink in
            for minute in Int64(0)..<10 { try sink.add(record(a.id, minute: minute), participant: a.handle) }
            try sink.flush()
            during = [lockState(a.handle.rowKey), lockState(b.handle.rowKey)]
            return (10, sink.insertedCount, 0, 0)
        }
        #expect(during == ["55P03", "free"], "lock_not_available for the participant the import wrote")
        #expect(lockState(a.handle.rowKey) == "free", "released at commit")
    }
}

/// The result of an import run on another thread.
final class ImportOutcome: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var result: Result<ImportBatchResult, any Error>?
    func set(_ result: Result<ImportBatchResult, any Error>) { lock.withLock { self.result = result } }
    var value: Result<ImportBatchResult, any Error>? { lock.withLock { result } }
}
