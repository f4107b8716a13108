import CohortCore
import Testing

@testable import CohortExport

/// An export batch keeps its records in an array of their own; what a writer reads back from it
/// (events in order, each run of records at its indexes) is the sequence appended.
struct ExportBatchTests {
    /// What a consumer sees, in order: `P<pseudonym>`, `R<pseudonym>/<kind>`, `D<kind>`.
    func replay(_ batch: ExportBatch) -> [String] {
        var seen: [String] = []
        for event in batch.events {
            switch event {
            case .participant(let p, _): seen.append("P" + p.pseudonym)
            case .records(let run): for index in run { seen.append("R" + batch.records[index].pseudonym + "/" + batch.records[index].kind.rawValue) }
            case .dailyTotal(let r): seen.append("D" + r.kind.rawValue)
            }
        }
        return seen
    }

    @Test func recordsComeBackInOrderBetweenParticipantsAndDailyTotals() {
        var batch = ExportBatch()
        var expected: [String] = []
        for (index, pseudonym) in ["AAAA", "BBBB", "CCCC"].enumerated() {
            batch.append(.participant(DeidentifiedParticipant(pseudonym: pseudonym), []))
            expected.append("P" + pseudonym)
            // A participant with no records, one, and several.
            for kind in [RecordKind.heartRate, .steps, .pain].prefix(index * 2) {
                batch.append(record: DeidentifiedRecord(pseudonym: pseudonym, kind: kind))
                expected.append("R\(pseudonym)/\(kind.rawValue)")
            }
            if index == 1 {
                batch.append(.dailyTotal(DeidentifiedRecord(pseudonym: pseudonym, kind: .steps)))
                expected.append("Dsteps")
                batch.append(record: DeidentifiedRecord(pseudonym: pseudonym, kind: .fatigue))
                expected.append("R\(pseudonym)/fatigue")
            }
        }
        #expect(replay(batch) == expected)
        #expect(batch.count == batch.events.count + batch.records.count)
        #expect(batch.records.count == 6)
        // Consecutive records share one run; a participant or a daily total starts another.
        let runs = batch.events.compactMap { event -> Range<Int>? in
            if case .records(let run) = event { return run }
            return nil
        }
        #expect(runs == [0..<2, 2..<3, 3..<6])
    }

    @Test func anEmptiedBatchStartsAgain() {
        var batch = ExportBatch()
        batch.append(record: DeidentifiedRecord(pseudonym: "AAAA", kind: .pain))
        batch.removeAll()
        #expect(batch.count == 0)
        batch.append(record: DeidentifiedRecord(pseudonym: "BBBB", kind: .steps))
        #expect(replay(batch) == ["RBBBB/steps"])
    }
}
