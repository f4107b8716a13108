import CohortCore
import Foundation
import Testing

@testable import CohortDeid

/// The export's k-anonymity pass reads each participant's records kind by kind (the store's
/// unique index order: kind, start, source), while the write reads them by start then kind. What
/// the pass learns must be what the write publishes: a record's published start and source
/// depend on the records before it *of its kind* only (the dense-series track of
/// `ParticipantShift.shiftSeries` is kept per kind), and records of one kind with the same
/// start are published alike in either order.
extension DeidentifierTests {
    @Test func publishedStartsAndSourcesDependOnlyOnEachKindsOwnOrder() throws {
        var rng = SeededRandom(seed: 28)
        let kinds: [RecordKind] = [.pain, .fatigue, .heartRate, .steps, .medicationDose]
        let sources: [String?] = ["Apple Watch", "Garmin Venu", "Fitbit", nil]
        var differsWhenKindsAreShuffled = 0
        for p in PlantedRoster.participants {
            // Records every 0–49 minutes (0: several at one start) across the 2024-11-03 change
            // from daylight time in Chicago, unique by kind, start and source as the store keeps them.
            var records: [Record] = []
            var keys = Set<String>()
            var t: Int64 = 1_730_160_000_000  // 2024-10-29T00:00Z
            for _ in 0..<900 {
                t += Int64(rng.next() % 50) * 60_000
                let kind = kinds[Int(rng.next() % UInt64(kinds.count))]
                let source = sources[Int(rng.next() % UInt64(sources.count))]
                guard keys.insert("\(kind.rawValue)|\(t)|\(source ?? "")").inserted else { continue }
                let end = rng.next() % 3 == 0 ? Timestamp(epochMilliseconds: t + 300_000, utcOffsetSeconds: -18_000) : nil
                records.append(Record(participantID: p.id, kind: kind, start: Timestamp(epochMilliseconds: t, utcOffsetSeconds: -18_000), end: end, source: source))
            }
            // The write's order: start, then kind; records equal in both come in no promised order.
            let byStart = records.shuffled(using: &rng).sorted {
                ($0.start.epochMilliseconds, $0.kind.rawValue) < ($1.start.epochMilliseconds, $1.kind.rawValue)
            }
            let byKind = records.sorted {
                ($0.kind.rawValue, $0.start.epochMilliseconds, $0.source ?? "") < ($1.kind.rawValue, $1.start.epochMilliseconds, $1.source ?? "")
            }
            let written = try published(byStart, of: p)
            #expect(written.count == records.count)
            let profiled = try published(byKind, of: p)
            for record in records {
                #expect(profiled[record]?.start == written[record]?.start && profiled[record]?.source == written[record]?.source)
            }
            for weekdayKept in [true, false] {
                #expect(try profile(byKind, of: p).values(weekdayKept: weekdayKept) == profile(byStart, of: p).values(weekdayKept: weekdayKept))
            }
            // The order within a kind does matter (so the check above can fail): shuffled whole,
            // the dense-series tracks publish some starts differently.
            let shuffled = try published(records.shuffled(using: &rng), of: p)
            differsWhenKindsAreShuffled += records.filter { shuffled[$0]?.start != written[$0]?.start }.count
        }
        #expect(differsWhenKindsAreShuffled > 0, "the records exercise the per-kind dense-series tracks")
    }

    /// Each record's published start and source, probed in `order` by a fresh de-identifier.
    private func published(_ order: [Record], of p: Participant) throws -> [Record: (start: Timestamp?, source: String?)] {
        var probe = try deidentifier(.init(maxDays: 180, wholeWeeks: false))
        var result: [Record: (start: Timestamp?, source: String?)] = [:]
        for record in order {
            guard let row = probe.publishedStartAndSource(record, of: p) else { continue }
            result[record] = row
        }
        return result
    }

    /// The acquaintance profile of the records probed in `order` (as the export's pass builds it).
    private func profile(_ order: [Record], of p: Participant) throws -> AcquaintanceProfile {
        var probe = try deidentifier(.init(maxDays: 180, wholeWeeks: false))
        var profile = AcquaintanceProfile()
        for record in order {
            guard let row = probe.publishedStartAndSource(record, of: p), let start = row.start else { continue }
            profile.add(kind: record.kind.rawValue, startMs: start.epochMilliseconds, offsetSeconds: start.utcOffsetSeconds, source: row.source)
        }
        return profile
    }
}
