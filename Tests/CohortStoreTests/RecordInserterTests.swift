import CohortCore
import CohortStore
import Foundation
import Synchronization
import Testing

struct RecordInserterTests {
    static func record(_ participant: Participant, _ kind: RecordKind, minute: Int64, value: Double, source: String? = "watch", note: String? = nil)
        -> CohortCore.Record
    {
        CohortCore.Record(
            participantID: participant.id, kind: kind,
            start: Timestamp(epochMilliseconds: 1_741_941_000_000 + minute * 60_000, utcOffsetSeconds: -18_000),
            end: minute % 7 == 0 ? Timestamp(epochMilliseconds: 1_741_941_000_000 + minute * 60_000 + 3_600_000, utcOffsetSeconds: -18_000) : nil,
            value: minute % 5 == 0 ? nil : value, text: minute % 3 == 0 ? "Ibuprofen \(minute)" : nil, source: source, note: note)
    }

    /// How ``store(_:grouped:kind:prepared:)`` hands records to the sink through its preparer:
    /// runs of these sizes in turn (0: one record through `add(_:participant:)`, between them).
    static let preparedRuns = [1, 130, 0, 7, 256, 0, 0, 3, 128, 127, 300]

    /// Stores `records` through `add` (grouped) or `insert` (one by one): (inserted, stored
    /// records). `prepared`: grouped, in runs (``preparedRuns``) made ready by the sink's
    /// preparer on another thread and added whole, with single `add`s between them.
    static func store(_ records: [CohortCore.Record], grouped: Bool, kind: StoreKind, prepared: Bool = false) throws -> (Int, [CohortCore.Record]) {
        try withStoreFixture(kind) { fixture in
            let store = try fixture.open(create: true)
            let e = try enrollment(code: "P-0001", identity: ParticipantIdentity(name: "Test Person"))
            try store.enroll([e], actor: "test", source: "test", at: fixedDate)
            let pk = try #require(try store.participants().first?.handle)
            let result = try store.importBatch(ImportBatchInfo(fileName: "r.csv", fileSHA256: String(repeating: "ab", count: 32), format: "csv"),
                actor: "test", at: fixedDate) { inserter in
                var inserted = 0
                if prepared {
                    let preparer = inserter.preparer
                    var next = 0
                    for run in Array(repeating: Self.preparedRuns, count: 1 + records.count / 100).joined() where next < records.count {
                        guard run > 0 else {
                            try inserter.add(records[next], participant: pk)
                            next += 1
                            continue
                        }
                        let slice = records[next..<min(records.count, next + run)].map { (pk, $0) }
                        // Made ready on a thread of its own, as the import's reader does.
                        let made = Mutex<Result<PreparedRecords, any Error>?>(nil)
                        let done = DispatchSemaphore(value: 0)
                        Thread {
                            made.withLock { $0 = Result { try preparer.prepare(slice) } }
                            done.signal()
                        }.start()
                        done.wait()
                        let batch = try #require(made.withLock { $0 }).get()
                        #expect(batch.count == slice.count)
                        try inserter.add(batch)
                        next += slice.count
                    }
                    try inserter.flush()
                    return (records.count, inserter.insertedCount, records.count - inserter.insertedCount, 0)
                }
                for record in records {
                    if grouped {
                        try inserter.add(record, participant: pk)
                    } else if try inserter.insert(record, participant: pk) {
                        inserted += 1
                    }
                }
                if grouped {
                    try inserter.flush()
                    inserted = inserter.insertedCount
                }
                return (records.count, inserted, records.count - inserted, 0)
            }
            var stored: [CohortCore.Record] = []
            try store.forEachRecord(pk, participantID: e.participant.id) { stored.append($0) }
            #expect(result.inserted + result.duplicates == records.count)
            return (result.inserted, stored)
        }
    }

    @Test(arguments: StoreKind.tested, [0, 1, 31, 32, 33, 100, 1_000])
    func groupedWritesStoreAndCountExactlyAsSingleInserts(kind: StoreKind, count: Int) throws {
        let p = try enrollment(code: "P-0001", identity: ParticipantIdentity(name: "X")).participant
        var records: [CohortCore.Record] = []
        for i in 0..<count {
            let kind: RecordKind = i % 4 == 0 ? .medicationDose : .heartRate
            records.append(Self.record(p, kind, minute: Int64(i), value: 60 + Double(i) / 4, note: i % 10 == 0 ? "note, with \"quotes\" ☀️" : nil))
            // Duplicates: the same row again within the group, and one from an earlier group.
            if i % 9 == 0 { records.append(Self.record(p, kind, minute: Int64(i), value: 99)) }
            if i % 40 == 39 { records.append(Self.record(p, .heartRate, minute: 1, value: 98)) }
            // Same start, another source: not a duplicate.
            if i % 11 == 0 { records.append(Self.record(p, kind, minute: Int64(i), value: 97, source: nil)) }
        }
        let (groupedCount, grouped) = try Self.store(records, grouped: true, kind: kind)
        let (singleCount, single) = try Self.store(records, grouped: false, kind: kind)
        let (preparedCount, prepared) = try Self.store(records, grouped: true, kind: kind, prepared: true)
        #expect(groupedCount == singleCount && preparedCount == singleCount)
        #expect(grouped.count == groupedCount)
        // Participant ids differ between the two stores' enrollments: compare everything else.
        func strip(_ r: CohortCore.Record) -> String { "\(r.kind) \(r.start) \(String(describing: r.end)) \(String(describing: r.value)) \(r.text ?? "-") \(r.source ?? "-") \(r.note ?? "-")" }
        #expect(grouped.map(strip) == single.map(strip))
        #expect(prepared.map(strip) == single.map(strip))
    }
}
