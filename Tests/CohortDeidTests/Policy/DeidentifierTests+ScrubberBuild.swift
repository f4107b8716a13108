import CohortCore
import CohortIO
import Foundation
import Testing

@testable import CohortDeid

/// An export builds its scrubber on a thread of its own (``BackgroundValue``) while it makes the
/// participant rows and runs the k-anonymity pass (issue 28, seventeenth round). A de-identifier
/// given the build publishes what one given the built scrubber publishes, and a build that
/// failed is thrown by `awaitScrubber()`.
extension DeidentifierTests {
    static func make(building scrubber: BackgroundValue<Scrubber>, _ studyProtocol: StudyProtocol = Fixtures.studyProtocol()) throws -> Deidentifier {
        try Deidentifier(
            studyProtocol: studyProtocol, recipient: "analyst", recipientKey: Fixtures.key, shiftKey: Fixtures.key, scrubberBuild: scrubber,
            referenceDate: reference)
    }

    /// Records of every kind with planted identifiers in their notes, texts and sources.
    static func plantedRecords(of p: Participant) -> [Record] {
        let start = Timestamp(epochMilliseconds: 1_741_940_000_000, utcOffsetSeconds: 3_600)
        let name = p.identity?.name ?? "Jane Doe"
        return [
            Record(participantID: p.id, kind: .pain, start: start, value: 4, note: "Saw \(name) at 555-867-5309, flare on 03/02/2025"),
            Record(participantID: p.id, kind: .medicationDose, start: start, value: 200, text: "ibuprofen", source: "\(name)'s iPhone"),
            Record(participantID: p.id, kind: .steps, start: start, value: 7, source: "Apple Watch"),
            Record(participantID: p.id, kind: .fatigue, start: start, value: 2, note: "tired after the hike with my sister"),
        ]
    }

    @Test func aScrubberBuiltMeanwhilePublishesWhatABuiltOneDoes() throws {
        var fields = Fixtures.allFields
        fields["medication_log.source"] = FieldRule(.scrub)
        let studyProtocol = Fixtures.studyProtocol(fields: fields)
        var inLine = try Self.make(studyProtocol)
        let roster = PlantedRoster.participants
        var meanwhile = try Self.make(building: BackgroundValue(name: "test-scrubber") { try Scrubber(roster: roster) }, studyProtocol)
        // Rows before the scrubber is awaited: the first scrub waits for it.
        for p in roster {
            #expect(meanwhile.participant(p) == inLine.participant(p))
            for record in Self.plantedRecords(of: p) {
                #expect(meanwhile.record(record, of: p) == inLine.record(record, of: p))
            }
        }
        // And after it is awaited (awaiting again is nothing).
        try meanwhile.awaitScrubber()
        try meanwhile.awaitScrubber()
        for p in roster.reversed() {
            for record in Self.plantedRecords(of: p) { #expect(meanwhile.record(record, of: p) == inLine.record(record, of: p)) }
        }
        #expect(meanwhile.stats == inLine.stats)
        #expect(inLine.stats.scrubTokens.total > 0, "the planted identifiers were scrubbed")
    }

    @Test func aFailedBuildIsThrownWhenTheScrubberIsAwaited() throws {
        struct WordListsMissing: Error, Equatable {}
        var deid = try Self.make(building: BackgroundValue(name: "test-scrubber") { throw WordListsMissing() })
        // What needs no scrubber is made meanwhile.
        let p = PlantedRoster.participants[0]
        #expect(deid.participant(p).pseudonym == deid.pseudonym(of: p))
        #expect(throws: WordListsMissing()) { try deid.awaitScrubber() }
        #expect(throws: WordListsMissing()) { try deid.awaitScrubber() }
    }

    @Test func whatIsScrubbedBeforeTheRecordsTextsIsNamed() {
        func policy(_ rules: [String: FieldRule]) -> DeidentificationPolicy {
            var fields = Fixtures.allFields
            for (key, rule) in rules { fields[key] = rule }
            return Fixtures.studyProtocol(fields: fields).deidentification
        }
        #expect(!Deidentifier.scrubsBeforeRecordTexts(policy(["records.note": FieldRule(.scrub), "medication_log.text": FieldRule(.scrub)])))
        #expect(Deidentifier.scrubsBeforeRecordTexts(policy(["medication_log.source": FieldRule(.scrub)])))
        #expect(Deidentifier.scrubsBeforeRecordTexts(policy(["records.source": FieldRule(.scrub)])))
        #expect(Deidentifier.scrubsBeforeRecordTexts(policy(["participant.time_zone": FieldRule(.scrub)])))
        #expect(Deidentifier.scrubsBeforeRecordTexts(policy(["consent.version": FieldRule(.scrub)])))
    }
}
