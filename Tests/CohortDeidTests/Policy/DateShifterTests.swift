import CohortCore
import Foundation
import Testing

@testable import CohortDeid

struct DateShifterTests {
    /// Recomputed with Python's hmac: `-(u64be(HMAC(key, "date-shift" ‖ id)[0..<8]) % 180 + 1)`,
    /// and `-7 · (… % 25 + 1)` in whole weeks.
    @Test func knownAnswer() throws {
        let id = try #require(UUID(uuidString: "123E4567-E89B-12D3-A456-426614174000"))
        #expect(try DateShifter(key: Fixtures.key, maxDays: 180, wholeWeeks: false).offset(for: id) == -142)
        #expect(try DateShifter(key: Fixtures.key, maxDays: 180, wholeWeeks: true).offset(for: id) == -84)
    }

    @Test(arguments: [1, 7, 30, 180, 365])
    func offsetsAreBackwardOnlyCoverTheRangeAndAreStable(maxDays: Int) throws {
        var g = SeededRandom(seed: UInt64(maxDays))
        let shifter = try DateShifter(key: Fixtures.key, maxDays: maxDays, wholeWeeks: false)
        let again = try DateShifter(key: Fixtures.key, maxDays: maxDays, wholeWeeks: false)
        #expect(shifter.range == -maxDays...(-1))
        var seen: Set<Int> = []
        for _ in 0..<2_000 {
            let id = Fixtures.uuid(&g)
            let offset = shifter.offset(for: id)
            #expect((-maxDays...(-1)).contains(offset), "never 0, never in the future")
            #expect(again.offset(for: id) == offset)
            seen.insert(offset)
        }
        // Uniform over the range: with 2,000 draws every value of a range up to 180 shows up.
        if maxDays <= 180 { #expect(seen.count == maxDays) }
        #expect(seen.contains(-1) && (maxDays > 180 || seen.contains(-maxDays)))
    }

    @Test func wholeWeeksKeepWeekdays() throws {
        var g = SeededRandom(seed: 3)
        let shifter = try DateShifter(key: Fixtures.key, maxDays: 100, wholeWeeks: true)
        #expect(shifter.range == -98...(-7))
        let day = Fixtures.date("2025-03-14")
        for _ in 0..<1_000 {
            let offset = shifter.offset(for: Fixtures.uuid(&g))
            #expect(offset % 7 == 0 && (-98...(-7)).contains(offset))
            #expect(shifter.shift(day, by: offset).isoWeekday == day.isoWeekday)
        }
    }

    @Test func differentKeysGetDifferentOffsets() throws {
        var g = SeededRandom(seed: 4)
        let a = try DateShifter(key: Fixtures.key, maxDays: 365, wholeWeeks: false)
        let b = try DateShifter(key: Fixtures.otherKey, maxDays: 365, wholeWeeks: false)
        var same = 0
        for _ in 0..<1_000 {
            let id = Fixtures.uuid(&g)
            if a.offset(for: id) == b.offset(for: id) { same += 1 }
        }
        #expect(same < 20)  // chance agreement is 1 in 365
    }

    @Test func zeroMaxDaysMeansNoShift() throws {
        var g = SeededRandom(seed: 5)
        let shifter = try DateShifter(key: Fixtures.key, maxDays: 0, wholeWeeks: true)
        #expect(shifter.offset(for: Fixtures.uuid(&g)) == 0)
        #expect(shifter.range == nil)
    }

    @Test func invalidSettingsAreRefused() {
        #expect(throws: CohortError.self) { try DateShifter(key: Fixtures.key, maxDays: 3, wholeWeeks: true) }
        #expect(throws: CohortError.self) { try DateShifter(key: Fixtures.key, maxDays: -1, wholeWeeks: false) }
    }

    @Test func shiftedRecordsKeepWallClockTimeAndOneOffsetAndIntervalsAwayFromTransitions() throws {
        var g = SeededRandom(seed: 11)
        let roster = Fixtures.roster(count: 40)  // America/Chicago
        let zone = try #require(TimeZone(identifier: "America/Chicago"))
        for wholeWeeks in [false, true] {
            var deid = try Deidentifier(
                studyProtocol: Fixtures.studyProtocol(wholeWeeks: wholeWeeks), recipient: "analyst", recipientKey: Fixtures.key, shiftKey: Fixtures.key,
                roster: roster, referenceDate: Fixtures.date("2025-06-01"))
            for participant in roster {
                let offset = deid.shifter.offset(for: participant.id)
                let records = Fixtures.records(for: participant, count: 25, using: &g)
                var shifted: [DeidentifiedRecord] = []
                for record in records {
                    let row = deid.record(record, of: participant)
                    shifted.append(try #require(row))
                }
                for i in records.indices {
                    let start = try #require(shifted[i].start)
                    #expect(start.utcOffsetSeconds == -21_600, "Chicago's standard offset, whatever was observed")
                    let expected = try CalendarShift.shift(records[i].start.epochMilliseconds, days: offset, zone: zone)
                    #expect(start.epochMilliseconds == expected)
                    // Wall-clock time of day in the zone is kept (times in a gap move forward by an hour).
                    let before = records[i].start.epochMilliseconds + Int64(zone.secondsFromGMT(for: records[i].start.date)) * 1000
                    let after = start.epochMilliseconds + Int64(zone.secondsFromGMT(for: start.date)) * 1000
                    #expect([0, 3_600_000].contains(after - before - Int64(offset) * 86_400_000))
                    if wholeWeeks { #expect(start.localDate(in: zone).isoWeekday == records[i].start.localDate(in: zone).isoWeekday) }
                    if let end = records[i].end {
                        // Lengths change by at most the DST hour.
                        let length = try #require(shifted[i].end).epochMilliseconds - start.epochMilliseconds
                        #expect(abs(length - (end.epochMilliseconds - records[i].start.epochMilliseconds)) <= 3_600_000)
                    }
                }
            }
        }
    }
}
