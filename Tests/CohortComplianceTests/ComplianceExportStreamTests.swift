import CohortCompliance
import CohortCore
import Foundation
import Testing

struct ComplianceExportStreamTests {
    /// A sink that keeps what it is given, for comparing bytes.
    final class Collected: @unchecked Sendable {
        var data = Data()
        var pieces = 0
    }

    /// A cohort of `count` participants across zones, enrollment days, withdrawals and
    /// record patterns (some with no counted day at all), with their records.
    func cohort(_ count: Int, seed: UInt64) throws -> [(ComplianceSubject, [(RecordKind, Timestamp)])] {
        var state = seed
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let zones = ["Europe/Berlin", "UTC", "America/New_York", "Asia/Kolkata", "Pacific/Auckland"]
        var people: [(ComplianceSubject, [(RecordKind, Timestamp)])] = []
        for i in 0..<count {
            let zone = zones[next(zones.count)]
            let enrolled = CivilDate(daysSinceEpoch: 20_089 + next(55))  // 2025-01-01 + 0…54: some after as-of (rate N/A)
            let withdrawn = next(5) == 0 ? Timestamp(epochMilliseconds: Int64(enrolled.daysSinceEpoch + 3 + next(20)) * 86_400_000) : nil
            let subject = try Fixture.subject(
                String(format: "P-%04d", i), zone: zone, enrolled: enrolled.description, withdrawnAt: withdrawn,
                status: withdrawn == nil ? .active : .stopped)
            var records: [(RecordKind, Timestamp)] = []
            for day in 0..<45 where next(4) != 0 {
                for _ in 0..<next(4) {
                    let kind: RecordKind = [.pain, .fatigue, .steps, .heartRate][next(4)]
                    let ms = Int64(enrolled.daysSinceEpoch + day) * 86_400_000 + Int64(next(86_400)) * 1000
                    records.append((kind, Timestamp(epochMilliseconds: ms)))
                }
            }
            people.append((subject, records))
        }
        return people
    }

    @Test(arguments: [0, 1, 2, 7, 60])
    func streamIsByteIdenticalToTheExportFormOfTheWholeReport(participants count: Int) throws {
        let studyProtocol = Fixture.studyProtocol(durationDays: 28)
        let asOf = try Fixture.at("2025-02-20 12:00", "UTC").date
        let people = try cohort(count, seed: UInt64(count) + 11)
        var engine = ComplianceEngine(studyProtocol: studyProtocol, asOf: asOf)
        for (subject, _) in people { try engine.add(participant: subject) }
        for (subject, records) in people {
            for (kind, start) in records { engine.add(recordOf: subject.id, kind: kind, start: start) }
        }
        var labels: [UUID: String] = [:]
        for (index, (subject, _)) in people.enumerated() { labels[subject.id] = "PSEUDO\(index)" }
        let expected = try engine.report().forExport { labels[$0] }.jsonData()

        let collected = Collected()
        var stream = try ComplianceExportStream(studyProtocol: studyProtocol, asOf: asOf) {
            collected.data.append($0)
            collected.pieces += 1
        }
        for (index, (subject, records)) in people.enumerated() {
            try stream.begin(subject, pseudonym: "PSEUDO\(index)")
            for (kind, start) in records { stream.add(kind: kind, start: start) }
        }
        try stream.finish()
        #expect(collected.data == expected)
        // Written as it goes: an opening, one piece per participant, and the closing pieces.
        #expect(collected.pieces == count + 3)
    }

    @Test func aRecordBeforeAnyParticipantIsIgnoredAndFinishTwiceIsRefused() throws {
        let studyProtocol = Fixture.studyProtocol()
        let asOf = try Fixture.at("2025-01-10 12:00", "UTC").date
        let collected = Collected()
        var stream = try ComplianceExportStream(studyProtocol: studyProtocol, asOf: asOf) { collected.data.append($0) }
        stream.add(kind: .pain, start: try Fixture.at("2025-01-02 10:00", "UTC"))
        try stream.finish()
        let empty = try ComplianceEngine(studyProtocol: studyProtocol, asOf: asOf).report().forExport { _ in nil }.jsonData()
        #expect(collected.data == empty)
        #expect(throws: CohortError.self) { try stream.finish() }
    }

    @Test func anUnknownTimeZoneFailsAtBeginWithoutWritingTheParticipant() throws {
        let collected = Collected()
        var stream = try ComplianceExportStream(studyProtocol: Fixture.studyProtocol(), asOf: try Fixture.at("2025-01-10 12:00", "UTC").date) {
            collected.data.append($0)
        }
        let before = collected.data
        #expect(throws: CohortError.self) { try stream.begin(try Fixture.subject(zone: "Mars/Olympus", enrolled: "2025-01-01"), pseudonym: "X") }
        #expect(collected.data == before)
    }
}
