import CohortCore
import Foundation
import Testing

@testable import CohortCompliance

struct DayClockTests {
    @Test(arguments: ["Europe/Berlin", "America/New_York", "Asia/Kolkata", "Pacific/Auckland", "Australia/Lord_Howe", "UTC"])
    func agreesWithTimestampLocalDateInOrderAndOutOfOrder(zoneID: String) throws {
        let zone = try Fixture.zone(zoneID)
        var clock = DayClock(timeZone: zone)
        var generator = SeededRandom(seed: 42)
        let start: Int64 = 1_704_067_200_000  // 2024-01-01T00:00Z
        let span: Int64 = 3 * 365 * 86_400_000
        var instants = (0..<4000).map { _ in start + Int64(generator.next() % UInt64(span)) }
        let shuffled = instants
        instants.sort()
        for ms in instants + shuffled {
            let stamp = Timestamp(epochMilliseconds: ms)
            #expect(clock.day(of: stamp) == stamp.localDate(in: zone).daysSinceEpoch)
        }
    }

    @Test func instantsAroundTheBerlinSpringForwardMapToTheRightDay() throws {
        let zone = try Fixture.zone("Europe/Berlin")
        var clock = DayClock(timeZone: zone)
        let transition: Int64 = 1_743_296_400_000  // 2025-03-30T01:00:00Z = 03:00 CEST
        let march30 = try Fixture.day("2025-03-30").daysSinceEpoch
        #expect(clock.day(of: Timestamp(epochMilliseconds: transition - 1)) == march30)
        #expect(clock.day(of: Timestamp(epochMilliseconds: transition)) == march30)
        // 2025-03-30T22:00:00Z is midnight CEST: the next day.
        #expect(clock.day(of: Timestamp(epochMilliseconds: transition + 21 * 3_600_000 - 1)) == march30)
        #expect(clock.day(of: Timestamp(epochMilliseconds: transition + 21 * 3_600_000)) == march30 + 1)
    }
}
