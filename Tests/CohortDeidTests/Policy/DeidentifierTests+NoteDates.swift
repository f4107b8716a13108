import CohortCore
import Foundation
import Testing

@testable import CohortDeid

extension DeidentifierTests {
    /// A date written in a note moves by the participant's own offset for this recipient — the
    /// offset of the structured dates — so one unshifted date cannot give the shift away.
    @Test func datesInNotesMoveWithTheParticipantsOffset() throws {
        var deid = try Self.make()
        let shifter = try DateShifter(key: Fixtures.key, maxDays: 180, wholeWeeks: false)
        for p in PlantedRoster.participants {
            let offset = shifter.offset(for: p.id)
            let written = try #require(CivilDate(year: 2025, month: 3, day: 10))
            let record = Record(
                participantID: p.id, kind: .pain, start: Timestamp(epochMilliseconds: 1_741_600_000_000), value: 4,
                note: "flare began on \(written.description) after the long drive")
            let published = deid.record(record, of: p)
            let row = try #require(published)
            let expected = CivilDate(daysSinceEpoch: written.daysSinceEpoch + offset)
            #expect(row.note == "flare began on \(expected.description) after the long drive")
            #expect(offset != 0)
        }
    }
}
