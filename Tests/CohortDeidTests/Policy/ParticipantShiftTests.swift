import CohortCore
import Foundation
import Testing

@testable import CohortDeid

/// The zone-consistent shift computed independently: Foundation's Calendar in the zone takes the
/// real instant's wall-clock date and time, moves the date by `days`, and builds the instant back
/// (Calendar moves a time in a spring-forward gap forward and takes the earlier of two fall-back
/// times, as the importer does).
enum CalendarShift {
    static func shift(_ epochMilliseconds: Int64, days: Int, zone: TimeZone) throws -> Int64 {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let millis = Int64(Timestamp.floorDiv(epochMilliseconds, 1000) * 1000)
        let date = Date(timeIntervalSince1970: Double(millis) / 1000)
        let wall = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let noon = try #require(calendar.date(from: DateComponents(year: wall.year, month: wall.month, day: wall.day, hour: 12)))
        let shiftedNoon = try #require(calendar.date(byAdding: .day, value: days, to: noon))
        let day = calendar.dateComponents([.year, .month, .day], from: shiftedNoon)
        let result = try #require(
            calendar.date(
                from: DateComponents(
                    year: day.year, month: day.month, day: day.day, hour: wall.hour, minute: wall.minute, second: wall.second)))
        return Int64((result.timeIntervalSince1970 * 1000).rounded()) + (epochMilliseconds - millis)
    }
}

struct ParticipantShiftTests {
    static let zones = [
        "America/New_York", "America/Chicago", "America/Los_Angeles", "America/Santiago", "Europe/Berlin", "Europe/London",
        "Australia/Sydney", "Australia/Lord_Howe", "Pacific/Auckland", "Asia/Kolkata", "Asia/Tokyo", "UTC",
    ]

    @Test func shiftMatchesCalendarOverRandomInstantsAndZones() throws {
        var g = SeededRandom(seed: 2026)
        let reference = Timestamp(epochMilliseconds: 1_780_000_000_000)
        var gapsAndOverlaps = 0
        for name in Self.zones {
            let zone = try #require(TimeZone(identifier: name))
            for _ in 0..<40 {
                let days = -Int.random(in: 1...400, using: &g)
                var shift = ParticipantShift(days: days, zone: zone, reference: reference)
                var instants = (0..<150).map { _ in Int64.random(in: 1_600_000_000_000...1_800_000_000_000, using: &g) }
                // Wall-clock times around this zone's transitions: after shifting, some land in a
                // gap or an overlap of the shifted date.
                if let transition = zone.nextDaylightSavingTimeTransition(after: Date(timeIntervalSince1970: Double(instants[0]) / 1000)) {
                    let ms = Int64(transition.timeIntervalSince1970 * 1000)
                    for k in -6...6 { instants.append(ms + Int64(k) * 1_800_000 - Int64(days) * 86_400_000) }
                    for k in -6...6 { instants.append(ms + Int64(k) * 1_800_000 + Int64.random(in: 0..<1000, using: &g)) }
                }
                for ms in instants.sorted() {
                    let observed = Timestamp(epochMilliseconds: ms, utcOffsetSeconds: Int32(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(ms) / 1000))))
                    let shifted = shift.shift(observed)
                    let expected = try CalendarShift.shift(ms, days: days, zone: zone)
                    #expect(shifted.epochMilliseconds == expected, "\(name) \(ms) \(days)")
                    #expect(shifted.utcOffsetSeconds == shift.publishedOffsetSeconds)
                    let local = ms + Int64(observed.utcOffsetSeconds) * 1000 + Int64(days) * 86_400_000
                    let back = shifted.epochMilliseconds + Int64(zone.secondsFromGMT(for: shifted.date)) * 1000
                    if back != local { gapsAndOverlaps += 1 }
                }
            }
        }
        #expect(gapsAndOverlaps > 0, "the cases include wall-clock times in a gap of the shifted date")
    }

    @Test func aLocalDayStaysALocalDayOfTheShiftedCalendar() throws {
        let zone = try #require(TimeZone(identifier: "America/New_York"))
        // Real 2026-03-08 is the spring-forward day (23 h); shifted by -14 days it is an ordinary day.
        let start = try #require(Timestamp.parse("2026-03-08T00:00:00-05:00", defaultTimeZone: nil))
        let end = try #require(Timestamp.parse("2026-03-09T00:00:00-04:00", defaultTimeZone: nil))
        var shift = ParticipantShift(days: -14, zone: zone, reference: start)
        #expect(shift.shift(start).iso8601 == "2026-02-22T00:00:00-05:00")
        #expect(shift.shift(end).iso8601 == "2026-02-23T00:00:00-05:00")
        // And a day that lands on 2025-11-02 (fall back) is 25 hours long, like every New York day then.
        var back = ParticipantShift(days: -126, zone: zone, reference: start)
        #expect(back.shift(end).epochMilliseconds - back.shift(start).epochMilliseconds == 90_000_000)
    }

    @Test(arguments: [
        ("America/New_York", "2026-07-01T12:00:00Z", "-05:00"), ("America/New_York", "2026-01-01T12:00:00Z", "-05:00"),
        ("Europe/Berlin", "2026-07-01T12:00:00Z", "+01:00"), ("Australia/Sydney", "2026-01-01T12:00:00Z", "+10:00"),
        ("Asia/Kolkata", "2026-01-01T12:00:00Z", "+05:30"), ("UTC", "2026-01-01T12:00:00Z", "+00:00"),
        ("America/St_Johns", "2026-07-01T12:00:00Z", "-03:30"),
    ])
    func publishedOffsetIsTheStandardOffset(zone: String, at reference: String, expected: String) throws {
        let shift = ParticipantShift(
            days: -7, zone: try #require(TimeZone(identifier: zone)), reference: try #require(Timestamp.parse(reference, defaultTimeZone: nil)))
        #expect(shift.publishedOffset == expected)
    }

    @Test func travelDoesNotShowInThePublishedOffset() throws {
        var shift = ParticipantShift(
            days: -7, zone: try #require(TimeZone(identifier: "Europe/Berlin")), reference: Timestamp(epochMilliseconds: 1_780_000_000_000))
        // Recorded in Tokyo and in New York: written at Berlin's standard offset.
        let tokyo = try #require(Timestamp.parse("2026-02-10T09:00:00+09:00", defaultTimeZone: nil))
        let newYork = try #require(Timestamp.parse("2026-02-12T09:00:00-05:00", defaultTimeZone: nil))
        #expect(shift.shift(tokyo).iso8601 == "2026-02-03T01:00:00+01:00")
        #expect(shift.shift(newYork).iso8601 == "2026-02-05T15:00:00+01:00")
    }

    @Test func keepAndYearAreWrittenAtThePublishedOffset() throws {
        var shift = ParticipantShift(
            days: 0, zone: try #require(TimeZone(identifier: "Australia/Sydney")), reference: Timestamp(epochMilliseconds: 1_780_000_000_000))
        let summer = try #require(Timestamp.parse("2026-01-01T00:30:00+11:00", defaultTimeZone: nil))
        #expect(shift.published(summer).iso8601 == "2025-12-31T23:30:00+10:00")
        #expect(shift.shift(summer) == shift.published(summer))
        #expect(shift.yearStart(summer).iso8601 == "2026-01-01T00:00:00+10:00")
    }
}
