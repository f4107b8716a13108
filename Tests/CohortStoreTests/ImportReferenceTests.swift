import CohortCore
import CohortStore
import Foundation
import Testing

/// The import's transaction does not enforce SQLite's foreign keys row by row (issue 28); its
/// sink checks once per key that the participants and the batch it wrote exist. Written as an
/// attacker of that shortcut would: rows for a participant the study does not hold, grouped,
/// one by one and made ready on the preparer's path, first, last and between real ones.
struct ImportReferenceTests {
    enum Path: String, CaseIterable, Sendable { case grouped, single, prepared }

    static func records(_ e: Enrollment, count: Int) -> [CohortCore.Record] {
        (0..<count).map { RecordInserterTests.record(e.participant, .steps, minute: Int64($0), value: 100) }
    }

    /// Adds `records` through `path`, the one at `strayAt` for a participant row that does not exist.
    static func add(
        _ records: [CohortCore.Record], to sink: any RecordSink, participant: ParticipantHandle, strayAt: Int, path: Path
    ) throws {
        let stray = ParticipantHandle(rowKey: participant.rowKey + 1_000)
        for (i, record) in records.enumerated() {
            let handle = i == strayAt ? stray : participant
            switch path {
            case .grouped: try sink.add(record, participant: handle)
            case .single: _ = try sink.insert(record, participant: handle)
            case .prepared: try sink.add(try sink.preparer.prepare([(handle, record)]))
            }
        }
        try sink.flush()
    }

    @Test(arguments: StoreKind.tested, Path.allCases)
    func anImportWithARecordForAParticipantTheStudyDoesNotHoldStoresNothing(kind: StoreKind, path: Path) throws {
        for strayAt in [0, 77, 299] {
            try withStoreFixture(kind) { fixture in
                let store = try fixture.open(create: true)
                let e = try enrollment(code: "P-0001", identity: ParticipantIdentity(name: "Test Person"))
                try store.enroll([e], actor: "test", source: "test", at: fixedDate)
                let handle = try #require(try store.participants().first?.handle)
                let head = try store.auditHead()
                let records = Self.records(e, count: 300)
                let error = #expect(throws: CohortError.self) {
                    _ = try store.importBatch(
                        ImportBatchInfo(fileName: "r.csv", fileSHA256: String(repeating: "ab", count: 32), format: "csv"), actor: "test", at: fixedDate
                    ) { sink in
                        try Self.add(records, to: sink, participant: handle, strayAt: strayAt, path: path)
                        return (records.count, sink.insertedCount, 0, 0)
                    }
                }
                #expect(error?.code == .integrity, "stray record at \(strayAt)")
                #expect(try store.recordCount() == 0, "nothing imported (stray record at \(strayAt))")
                #expect(try store.auditHead()?.seq == head?.seq, "no event appended")
            }
        }
    }

    /// The shortcut ends with the import: after it (committed or not) the connection enforces
    /// foreign keys again, so a consent for a participant row that does not exist is refused.
    @Test(arguments: [true, false])
    func foreignKeysAreEnforcedAgainAfterAnImport(commits: Bool) throws {
        try withStoreFixture(.sqlite) { fixture in
            let store = try fixture.open(create: true)
            let e = try enrollment(code: "P-0001", identity: ParticipantIdentity(name: "Test Person"))
            try store.enroll([e], actor: "test", source: "test", at: fixedDate)
            let handle = try #require(try store.participants().first?.handle)
            let records = Self.records(e, count: 10)
            _ = try? store.importBatch(
                ImportBatchInfo(fileName: "r.csv", fileSHA256: String(repeating: "ab", count: 32), format: "csv"), actor: "test", at: fixedDate
            ) { sink in
                try Self.add(records, to: sink, participant: handle, strayAt: commits ? -1 : 5, path: .grouped)
                return (records.count, sink.insertedCount, 0, 0)
            }
            #expect(try store.recordCount() == (commits ? 10 : 0))
            let stray = ParticipantHandle(rowKey: handle.rowKey + 1_000)
            #expect(throws: (any Error).self) {
                try store.recordConsent(
                    StudyOperationsTests.consent(e), participant: stray, signatureEvidence: nil, supersede: [], actor: "test", at: fixedDate)
            }
        }
    }
}
