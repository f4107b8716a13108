import Foundation
import Testing

@testable import CohortCore

struct TimestampTests {
    static let utc = TimeZone(identifier: "UTC")
    static let berlin = TimeZone(identifier: "Europe/Berlin")
    static let newYork = TimeZone(identifier: "America/New_York")
    static let auckland = TimeZone(identifier: "Pacific/Auckland")
    static let kolkata = TimeZone(identifier: "Asia/Kolkata")

    static func zone(_ identifier: String) throws -> TimeZone { try #require(TimeZone(identifier: identifier)) }

    // MARK: Parsing

    @Test(arguments: [
        ("2025-03-14T08:30:00Z", 1_741_941_000_000, 0),
        ("2025-03-14t08:30:00z", 1_741_941_000_000, 0),
        ("2025-03-14T08:30:00+00:00", 1_741_941_000_000, 0),
        ("2025-03-14T08:30:00+01:00", 1_741_937_400_000, 3600),
        ("2025-03-14T08:30:00+0100", 1_741_937_400_000, 3600),
        ("2025-03-14T08:30:00+01", 1_741_937_400_000, 3600),
        ("2025-03-14T09:30:00+02:00", 1_741_937_400_000, 7200),
        ("2025-03-14T03:30:00-04:00", 1_741_937_400_000, -14400),
        ("2025-03-14T13:15:00+05:45", 1_741_937_400_000, 20700),
        ("2025-03-14T08:30:00.250Z", 1_741_941_000_250, 0),
        ("2025-03-14T08:30:00,250Z", 1_741_941_000_250, 0),
        ("2025-03-14T08:30:00.5Z", 1_741_941_000_500, 0),
        ("2025-03-14T08:30:00.05Z", 1_741_941_000_050, 0),
        ("2025-03-14T08:30:00.123456Z", 1_741_941_000_123, 0),
        ("2025-03-14T08:30:00.999999999+01:00", 1_741_937_400_999, 3600),
        ("2025-03-14 08:30:00Z", 1_741_941_000_000, 0),
        ("2025-03-14 08:30:00+01:00", 1_741_937_400_000, 3600),
        ("2025-03-14T08:30Z", 1_741_941_000_000, 0),
        ("2024-02-29T23:59:59Z", 1_709_251_199_000, 0),
        ("1969-12-31T23:59:59Z", -1000, 0),
        ("2025-01-01Z", 1_735_689_600_000, 0),
    ] as [(String, Int64, Int32)])
    func parsesISO8601(text: String, epochMilliseconds: Int64, offset: Int32) throws {
        let timestamp = try #require(Timestamp.parse(text, defaultTimeZone: nil))
        #expect(timestamp.epochMilliseconds == epochMilliseconds)
        #expect(timestamp.utcOffsetSeconds == offset)
    }

    @Test func bareDateIsMidnightInTheDefaultZone() throws {
        let utcMidnight = try #require(Timestamp.parse("2025-01-01", defaultTimeZone: try Self.zone("UTC")))
        #expect(utcMidnight.epochMilliseconds == 1_735_689_600_000)
        let berlinMidnight = try #require(Timestamp.parse("2025-01-01", defaultTimeZone: try Self.zone("Europe/Berlin")))
        #expect(berlinMidnight.epochMilliseconds == 1_735_689_600_000 - 3_600_000)
        #expect(berlinMidnight.utcOffsetSeconds == 3600)
        #expect(berlinMidnight.iso8601 == "2025-01-01T00:00:00+01:00")
    }

    @Test(arguments: [
        "2025-13-01T00:00:00Z", "2025-00-10T00:00:00Z", "2025-02-30T00:00:00Z", "2025-02-29T00:00:00Z", "2025-04-31",
        "2025-03-14T24:00:00Z", "2025-03-14T08:60:00Z", "2025-03-14T08:30:61Z", "2025-03-14T8:30:00Z", "2025-3-14T08:30:00Z",
        "20250314T083000Z", "2025-03-14T08:30:00.Z", "2025-03-14T08:30:00Zjunk", "2025-03-14T08:30:00 Z",
        "2025-03-14T08:30:00+15:00", "2025-03-14T08:30:00+01:60", "2025-03-14T08:30:00+01:00:00", "2025-03-14T08:30:00+1",
        "2025-03-14T08", "2025-03-14T", "2025-03-14X", "garbage", "", "yesterday at noon", "2025-03-14T08:30:00\u{0}Z",
    ])
    func rejectsInvalidText(text: String) throws {
        #expect(Timestamp.parse(text, defaultTimeZone: try Self.zone("UTC")) == nil)
    }

    @Test func localTimeWithoutAnOffsetNeedsAZone() throws {
        #expect(Timestamp.parse("2025-03-14T08:30:00", defaultTimeZone: nil) == nil)
        #expect(Timestamp.parse("2025-03-14", defaultTimeZone: nil) == nil)
        let summer = try #require(Timestamp.parse("2025-07-01T12:00:00", defaultTimeZone: try Self.zone("Europe/Berlin")))
        #expect(summer.utcOffsetSeconds == 7200)
        #expect(summer == Timestamp.parse("2025-07-01T10:00:00Z", defaultTimeZone: nil).map { Timestamp(epochMilliseconds: $0.epochMilliseconds, utcOffsetSeconds: 7200) })
        let winter = try #require(Timestamp.parse("2025-01-15T12:00:00", defaultTimeZone: try Self.zone("Europe/Berlin")))
        #expect(winter.utcOffsetSeconds == 3600)
        #expect(winter.iso8601 == "2025-01-15T12:00:00+01:00")
    }

    /// Berlin springs forward at 2025-03-30 02:00 → 03:00: 02:30 does not exist. It is read with
    /// the offset before the change (+01:00), i.e. the instant 03:30+02:00 — it moves forward.
    @Test func springForwardGapMovesForward() throws {
        let berlin = try Self.zone("Europe/Berlin")
        let gap = try #require(Timestamp.parse("2025-03-30T02:30:00", defaultTimeZone: berlin))
        #expect(gap.utcOffsetSeconds == 3600)
        #expect(gap.epochMilliseconds == 1_743_298_200_000)  // 01:30Z
        let after = try #require(Timestamp.parse("2025-03-30T03:30:00+02:00", defaultTimeZone: nil))
        #expect(gap.epochMilliseconds == after.epochMilliseconds)
        #expect(gap.iso8601 == "2025-03-30T02:30:00+01:00")
        // Just outside the gap nothing moves.
        let before = try #require(Timestamp.parse("2025-03-30T01:59:00", defaultTimeZone: berlin))
        #expect(before.iso8601 == "2025-03-30T01:59:00+01:00")
        let later = try #require(Timestamp.parse("2025-03-30T03:00:00", defaultTimeZone: berlin))
        #expect(later.iso8601 == "2025-03-30T03:00:00+02:00")
    }

    @Test func springForwardGapInNewYork() throws {
        let gap = try #require(Timestamp.parse("2025-03-09T02:30:00", defaultTimeZone: try Self.zone("America/New_York")))
        #expect(gap.utcOffsetSeconds == -18000)
        #expect(gap.epochMilliseconds == Timestamp.parse("2025-03-09T03:30:00-04:00", defaultTimeZone: nil)?.epochMilliseconds)
    }

    /// Berlin falls back at 2025-10-26 03:00 → 02:00: 02:30 happens twice. The earlier (+02:00) is chosen.
    /// Zones at +12 h and more: the gap and the overlap are found although half a day before the
    /// wall-clock time is already after the transition in UTC.
    @Test func gapAndOverlapInAuckland() throws {
        let auckland = try Self.zone("Pacific/Auckland")
        let gap = try #require(Timestamp.parse("2024-09-29T02:30:00", defaultTimeZone: auckland))
        #expect(gap.epochMilliseconds == Timestamp.parse("2024-09-29T03:30:00+13:00", defaultTimeZone: nil)?.epochMilliseconds)
        let overlap = try #require(Timestamp.parse("2025-04-06T02:30:00", defaultTimeZone: auckland))
        #expect(overlap.iso8601 == "2025-04-06T02:30:00+13:00")
        let before = try #require(Timestamp.parse("2024-09-29T01:30:00", defaultTimeZone: auckland))
        #expect(before.iso8601 == "2024-09-29T01:30:00+12:00")
    }

    @Test func fallBackOverlapTakesTheEarlierInstant() throws {
        let berlin = try Self.zone("Europe/Berlin")
        let overlap = try #require(Timestamp.parse("2025-10-26T02:30:00", defaultTimeZone: berlin))
        #expect(overlap.utcOffsetSeconds == 7200)
        #expect(overlap.epochMilliseconds == 1_761_438_600_000)  // 00:30Z
        #expect(overlap.iso8601 == "2025-10-26T02:30:00+02:00")
        let afterOverlap = try #require(Timestamp.parse("2025-10-26T03:30:00", defaultTimeZone: berlin))
        #expect(afterOverlap.utcOffsetSeconds == 3600)
        let newYork = try #require(Timestamp.parse("2025-11-02T01:30:00", defaultTimeZone: try Self.zone("America/New_York")))
        #expect(newYork.utcOffsetSeconds == -14400)
    }

    // MARK: Writing

    @Test(arguments: [
        ("2025-03-14T08:30:00Z", "2025-03-14T08:30:00Z"),
        ("2025-03-14T08:30:00+00:00", "2025-03-14T08:30:00Z"),
        ("2025-03-14T08:30:00+0100", "2025-03-14T08:30:00+01:00"),
        ("2025-03-14T08:30Z", "2025-03-14T08:30:00Z"),
        ("2025-03-14 08:30:00-03:30", "2025-03-14T08:30:00-03:30"),
        ("2025-03-14T08:30:00.5+05:45", "2025-03-14T08:30:00.500+05:45"),
        ("2025-03-14T08:30:00.000Z", "2025-03-14T08:30:00Z"),
        ("2025-03-14T08:30:00.123456Z", "2025-03-14T08:30:00.123Z"),
        ("1969-12-31T23:59:59.999Z", "1969-12-31T23:59:59.999Z"),
        ("2025-12-31T23:30:00-01:00", "2025-12-31T23:30:00-01:00"),
    ])
    func writesISO8601(text: String, expected: String) throws {
        let timestamp = try #require(Timestamp.parse(text, defaultTimeZone: nil))
        #expect(timestamp.iso8601 == expected)
        #expect(timestamp.description == expected)
        #expect(Timestamp.parse(expected, defaultTimeZone: nil) == timestamp)
    }

    @Test func iso8601RoundTripsOverManyInstantsAndOffsets() {
        var generator = SeededRandom(seed: 0x5EED)
        let offsets: [Int32] = [0, 3600, -3600, 19800, 20700, -12600, 46800, -36000, 50400, -43200]
        for _ in 0..<20_000 {
            // 1900…2100, millisecond precision.
            let ms = Int64(generator.next() % 6_342_969_600_000) - 2_208_988_800_000
            let offset = offsets[Int(generator.next() % UInt64(offsets.count))]
            let timestamp = Timestamp(epochMilliseconds: ms, utcOffsetSeconds: offset)
            let parsed = Timestamp.parse(timestamp.iso8601, defaultTimeZone: nil)
            #expect(parsed == timestamp, "\(timestamp.iso8601)")
            if parsed != timestamp { return }
        }
    }

    @Test func codableUsesISO8601() throws {
        let timestamp = try #require(Timestamp.parse("2025-03-14T08:30:00.250+01:00", defaultTimeZone: nil))
        let data = try JSONEncoder().encode([timestamp])
        #expect(String(decoding: data, as: UTF8.self) == #"["2025-03-14T08:30:00.250+01:00"]"#)
        #expect(try JSONDecoder().decode([Timestamp].self, from: data) == [timestamp])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([Timestamp].self, from: Data(#"["2025-03-14T08:30:00"]"#.utf8)) }
    }

    // MARK: Days

    @Test(arguments: [
        // Auckland is +13:00 in January (daylight time) and +12:00 in July.
        ("Pacific/Auckland", "2025-01-15T10:59:59.999Z", "2025-01-15"),
        ("Pacific/Auckland", "2025-01-15T11:00:00Z", "2025-01-16"),
        ("Pacific/Auckland", "2025-07-15T11:59:59Z", "2025-07-15"),
        ("Pacific/Auckland", "2025-07-15T12:00:00Z", "2025-07-16"),
        ("Asia/Kolkata", "2025-01-15T18:29:59.999Z", "2025-01-15"),
        ("Asia/Kolkata", "2025-01-15T18:30:00Z", "2025-01-16"),
        ("Asia/Kolkata", "2024-12-31T18:30:00Z", "2025-01-01"),
        ("America/New_York", "2025-01-01T04:59:59Z", "2024-12-31"),
        ("UTC", "1969-12-31T23:59:59.999Z", "1969-12-31"),
    ])
    func localDateInAZone(zone: String, instant: String, expected: String) throws {
        let timeZone = try Self.zone(zone)
        let timestamp = try #require(Timestamp.parse(instant, defaultTimeZone: nil))
        #expect(timestamp.localDate(in: timeZone).description == expected)
        #expect(CivilDate(timestamp.date, in: timeZone).description == expected)
        // The same instant written at the zone's offset has that local date too.
        let local = Timestamp(timestamp.date, in: timeZone)
        #expect(local.localDate.description == expected)
        #expect(local.epochMilliseconds == timestamp.epochMilliseconds)
    }

    @Test func localDateUsesTheTimestampsOwnOffset() throws {
        let late = try #require(Timestamp.parse("2025-03-14T23:30:00-05:00", defaultTimeZone: nil))
        #expect(late.localDate == CivilDate(year: 2025, month: 3, day: 14))
        #expect(late.localDate(in: try Self.zone("UTC")) == CivilDate(year: 2025, month: 3, day: 15))
    }

    @Test func addingDaysKeepsWallClockAndOffset() throws {
        let timestamp = try #require(Timestamp.parse("2025-03-14T08:30:00+01:00", defaultTimeZone: nil))
        #expect(timestamp.adding(days: 30).iso8601 == "2025-04-13T08:30:00+01:00")
        #expect(timestamp.adding(days: -73).iso8601 == "2024-12-31T08:30:00+01:00")
    }

    @Test func orderIsByInstant() throws {
        let a = try #require(Timestamp.parse("2025-03-14T08:30:00+01:00", defaultTimeZone: nil))  // 07:30Z
        let b = try #require(Timestamp.parse("2025-03-14T08:00:00Z", defaultTimeZone: nil))
        #expect(a < b)
        #expect([b, a].sorted() == [a, b])
    }
}

extension TimestampTests {
    @Test func formattedTextMatchesTheComposedTextForAnyInstantAndOffset() {
        var generator = SeededRandom(seed: 29)
        func next() -> UInt64 { generator.next() }
        let offsets = [0, 3_600, -21_600, 19_800, 20_700, -34_200, 50_400, -43_200, 1_800, 59, -59]
        var checked = 0
        for _ in 0..<20_000 {
            // From 1900 to 2100, with and without milliseconds.
            var ms = Int64(next() % 6_311_433_600_000) - 2_208_988_800_000
            if next() % 2 == 0 { ms -= ms % 1000 }
            let t = Timestamp(epochMilliseconds: ms, utcOffsetSeconds: Int32(offsets[Int(next() % UInt64(offsets.count))]))
            #expect(t.iso8601 == t.composedISO8601)
            checked += 1
        }
        // Years outside four digits, and an odd offset.
        let ancient = Timestamp(epochMilliseconds: -70_000_000_000_000, utcOffsetSeconds: 0)
        #expect(ancient.iso8601 == ancient.composedISO8601)
        #expect(Timestamp(epochMilliseconds: 1_741_940_000_123, utcOffsetSeconds: -16_200).iso8601 == "2025-03-14T03:43:20.123-04:30")
        #expect(checked == 20_000)
    }
}
