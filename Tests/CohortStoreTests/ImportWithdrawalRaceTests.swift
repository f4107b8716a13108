import CohortCore
import CohortCrypto
import CohortStore
import Foundation
import Synchronization
import Testing

/// A withdrawal that commits after the importer read its participants (another coordinator,
/// another terminal) must not let the file store what the withdrawal forbids: the store checks
/// at the import's commit, on both stores.
struct ImportWithdrawalRaceTests {
    /// Minute 0 of the test records is 1_741_941_000_000 ms; the stop is at minute 30.
    static let stopAt = Timestamp(epochMilliseconds: 1_741_941_000_000 + 30 * 60_000, utcOffsetSeconds: 3600)

    /// Enrolls P-0001 and P-0002 and returns the store, both participants and their handles,
    /// read before the withdrawal as an importer reads them.
    static func enrolled(_ fixture: StoreFixture) throws -> (any StudyStore, [Enrollment], [ParticipantHandle]) {
        let store = try fixture.open(create: true)
        let enrollments = [
            try enrollment(code: "P-0001", identity: StudyStoreTests.identity), try enrollment(code: "P-0002", identity: StudyStoreTests.identity),
        ]
        try store.enroll(enrollments, actor: "coordinator", source: "test", at: fixedDate)
        let handles = try enrollments.map { try #require(try store.participant(code: $0.participant.code)?.handle) }
        return (store, enrollments, handles)
    }

    static func withdraw(_ store: any StudyStore, _ e: Enrollment, _ handle: ParticipantHandle, mode: WithdrawalMode) throws {
        try store.withdraw(
            handle, participantID: e.participant.id, mode: mode, at: stopAt, by: "staff", actor: "staff", reason: nil, consentVersion: nil,
            receiptID: UUID())
    }

    /// Imports minutes `minutes` for both participants with the bulk path (`add` + `flush`).
    static func importBoth(_ store: any StudyStore, _ es: [Enrollment], _ handles: [ParticipantHandle], minutes: [Int64]) throws -> ImportBatchResult {
        try store.importBatch(ImportBatchInfo(fileName: "late.csv", fileSHA256: String(repeating: "cd", count: 32), format: "csv"), actor: "coordinator", at: fixedDate) {
            sink in
            for (e, handle) in zip(es, handles) {
                for minute in minutes { try sink.add(StudyStoreTests.record(e.participant, .heartRate, minute: minute, value: 60), participant: handle) }
            }
            try sink.flush()
            let total = es.count * minutes.count
            return (total, sink.insertedCount, total - sink.insertedCount, 0)
        }
    }

    @Test(arguments: StoreKind.tested, [WithdrawalMode.exclude, .erase])
    func anExclusionOrEraseThatCommitsBeforeTheImportStoresNothingFromTheFile(kind: StoreKind, mode: WithdrawalMode) throws {
        try withStoreFixture(kind) { fixture in
            let (store, es, handles) = try Self.enrolled(fixture)
            // The importer has its handles; then P-0002 is withdrawn before its transaction.
            try Self.withdraw(store, es[1], handles[1], mode: mode)
            let events = try store.auditEvents().count
            let error = #expect(throws: CohortError.self) { try Self.importBoth(store, es, handles, minutes: [0, 1, 2]) }
            #expect(error?.code == .conflict)
            #expect(error?.message.contains("withdrew") == true)
            #expect(error.map { !"\($0)".contains("P-0002") } == true, "the error names no participant")
            #expect(try store.recordCount() == 0, "nothing from the file, not even P-0001's rows")
            #expect(try store.counts()["import_batches"] == 0)
            #expect(try store.auditEvents().count == events, "no data.import event")
        }
    }

    @Test(arguments: StoreKind.tested)
    func afterAStopOnlyRecordsDatedAfterItAreRefused(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let (store, es, handles) = try Self.enrolled(fixture)
            try Self.withdraw(store, es[1], handles[1], mode: .stop)
            // Minute 31 is after the stop at minute 30: the whole file is refused.
            let error = #expect(throws: CohortError.self) { try Self.importBoth(store, es, handles, minutes: [10, 31]) }
            #expect(error?.code == .conflict)
            #expect(try store.recordCount() == 0)
            // Records up to the stop are still the study's: a file of those imports.
            let result = try Self.importBoth(store, es, handles, minutes: [10, 30])
            #expect(result.inserted == 4)
            #expect(try store.recordCount(handles[1]) == 2)
        }
    }

    @Test(arguments: StoreKind.tested)
    func participantsWhoDidNotWithdrawImportAsBefore(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let (store, es, handles) = try Self.enrolled(fixture)
            // Someone outside the file withdrew: the file is not concerned.
            let other = try enrollment(code: "P-0003", identity: StudyStoreTests.identity)
            try store.enroll([other], actor: "coordinator", source: "test", at: fixedDate)
            let otherHandle = try #require(try store.participant(code: "P-0003")?.handle)
            try Self.withdraw(store, other, otherHandle, mode: .erase)
            let result = try Self.importBoth(store, es, handles, minutes: [0, 1, 2])
            #expect(result.inserted == 6)
            #expect(try store.recordCount() == 6)
        }
    }

    /// On PostgreSQL the race is live: an erase that starts while another coordinator's import is
    /// writing the participant waits for the import (its row lock against the import's FOR KEY SHARE
    /// locks), then removes everything the import stored; the chain shows the import first.
    @Test(.enabled(if: PostgresTestCluster.available, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func anEraseDuringAnImportWaitsAndThenRemovesWhatTheImportStored() throws {
        try withStoreFixture(.postgres) { fixture in
            let (importer, es, handles) = try Self.enrolled(fixture)
            let coordinator = try fixture.open()
            let written = DispatchSemaphore(value: 0)
            let imported = Mutex(false)
            let errors = PostgresStudyStoreTests.concurrently(2) { i in
                if i == 0 {
                    _ = try importer.importBatch(
                        ImportBatchInfo(fileName: "live.csv", fileSHA256: String(repeating: "ef", count: 32), format: "csv"), actor: "coordinator",
                        at: fixedDate
                    ) { sink in
                        for minute in Int64(0)..<50 {
                            try sink.add(StudyStoreTests.record(es[1].participant, .heartRate, minute: minute, value: 60), participant: handles[1])
                        }
                        try sink.flush()  // the rows are in the table: the erase must now wait for this transaction
                        written.signal()
                        usleep(400_000)
                        for minute in Int64(50)..<60 {
                            try sink.add(StudyStoreTests.record(es[1].participant, .heartRate, minute: minute, value: 60), participant: handles[1])
                        }
                        try sink.flush()
                        return (60, sink.insertedCount, 60 - sink.insertedCount, 0)
                    }
                    imported.withLock { $0 = true }
                } else {
                    written.wait()
                    try Self.withdraw(coordinator, es[1], handles[1], mode: .erase)
                }
            }
            #expect(errors.isEmpty, "\(errors)")
            #expect(imported.withLock { $0 }, "the import committed: the erase waited for it")
            #expect(try coordinator.recordCount(handles[1]) == 0, "the erase removed what the import stored")
            let actions = try coordinator.auditEvents().map(\.action)
            let importAt = try #require(actions.firstIndex(of: "data.import"))
            let eraseAt = try #require(actions.firstIndex(of: "participant.withdraw"))
            #expect(importAt < eraseAt)
            #expect(try coordinator.verifyAudit(publicKey: fixture.signingKey.publicKey).isIntact)
        }
    }
}
