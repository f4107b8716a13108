import CohortCore
import Foundation
import Testing

@testable import CohortDeid

struct DateShifterTests {
    @Test func knownAnswer() throws {
        let id = try #require(UUID(uuidString: "123E4567-E89B-12D3-A456-426614174000"))
        #expect(try DateShifter(recipientKey: Fixtures.key, maxDays: 180, wholeWeeks: false).offset(for: id) == 142)
        #expect(try DateShifter(recipientKey: Fixtures.key, maxDays: 180, wholeWeeks: true).offset(for: id) == -98)
    }

    @Test(arguments: [1, 7, 30, 180, 365])
    func offsetsWithinRangeNeverZeroAndStable(maxDays: Int) throws {
        var g = SeededRandom(seed: UInt64(maxDays))
        let shifter = try DateShifter(recipientKey: Fixtures.key, maxDays: maxDays, wholeWeeks: false)
        let again = try DateShifter(recipientKey: Fixtures.key, maxDays: maxDays, wholeWeeks: false)
        var negative = 0
        var positive = 0
        for _ in 0..<2_000 {
            let id = Fixtures.uuid(&g)
            let offset = shifter.offset(for: id)
            #expect(offset != 0)
            #expect((-maxDays...maxDays).contains(offset))
            #expect(again.offset(for: id) == offset)
            if offset < 0 { negative += 1 } else { positive += 1 }
        }
        #expect(negative > 800 && positive > 800)
    }

    @Test func wholeWeeksKeepWeekdays() throws {
        var g = SeededRandom(seed: 3)
        let shifter = try DateShifter(recipientKey: Fixtures.key, maxDays: 100, wholeWeeks: true)
        let day = Fixtures.date("2025-03-14")
        for _ in 0..<1_000 {
            let offset = shifter.offset(for: Fixtures.uuid(&g))
            #expect(offset != 0 && offset % 7 == 0 && abs(offset) <= 98)
            #expect(shifter.shift(day, by: offset).isoWeekday == day.isoWeekday)
        }
    }

    @Test func differentRecipientsGetDifferentOffsets() throws {
        var g = SeededRandom(seed: 4)
        let a = try DateShifter(recipientKey: Fixtures.key, maxDays: 365, wholeWeeks: false)
        let b = try DateShifter(recipientKey: Fixtures.otherKey, maxDays: 365, wholeWeeks: false)
        var same = 0
        for _ in 0..<1_000 {
            let id = Fixtures.uuid(&g)
            if a.offset(for: id) == b.offset(for: id) { same += 1 }
        }
        #expect(same < 20)  // chance agreement is 1 in 730
    }

    @Test func zeroMaxDaysMeansNoShift() throws {
        var g = SeededRandom(seed: 5)
        let shifter = try DateShifter(recipientKey: Fixtures.key, maxDays: 0, wholeWeeks: true)
        #expect(shifter.offset(for: Fixtures.uuid(&g)) == 0)
    }

    @Test func invalidSettingsAreRefused() {
        #expect(throws: CohortError.self) { try DateShifter(recipientKey: Fixtures.key, maxDays: 3, wholeWeeks: true) }
        #expect(throws: CohortError.self) { try DateShifter(recipientKey: Fixtures.key, maxDays: -1, wholeWeeks: false) }
    }

    @Test func intervalsTimeOfDayAndOffsetsSurviveShifting() throws {
        var g = SeededRandom(seed: 11)
        let roster = Fixtures.roster(count: 40)
        for wholeWeeks in [false, true] {
            var deid = try Deidentifier(
                studyProtocol: Fixtures.studyProtocol(wholeWeeks: wholeWeeks), recipient: "analyst", recipientKey: Fixtures.key,
                roster: roster, referenceDate: Fixtures.date("2025-06-01"))
            for participant in roster {
                let records = Fixtures.records(for: participant, count: 25, using: &g)
                let shifted = records.map { deid.record($0, of: participant) }
                for i in records.indices {
                    let start = try #require(shifted[i].start)
                    #expect(start.utcOffsetSeconds == records[i].start.utcOffsetSeconds)
                    #expect(start.iso8601.dropFirst(10) == records[i].start.iso8601.dropFirst(10))  // time of day and offset
                    #expect(start != records[i].start)
                    if wholeWeeks { #expect(start.localDate.isoWeekday == records[i].start.localDate.isoWeekday) }
                    if let end = records[i].end {
                        #expect(try #require(shifted[i].end).epochMilliseconds - start.epochMilliseconds
                            == end.epochMilliseconds - records[i].start.epochMilliseconds)
                    }
                    for j in records.indices {
                        let other = try #require(shifted[j].start)
                        #expect(
                            other.epochMilliseconds - start.epochMilliseconds
                                == records[j].start.epochMilliseconds - records[i].start.epochMilliseconds)
                    }
                }
            }
        }
    }
}
