import CohortCore
import Foundation
import Testing

/// Overlap-free daily totals, checked against totals computed by hand.
struct DailyTotalsTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!

    /// Days since 1970-01-01 of an ISO date (0 for a bad one, which no test writes).
    static func days(_ iso: String) -> Int { CivilDate(iso: iso)?.daysSinceEpoch ?? 0 }

    /// `2026-10-03 09:00` Berlin time (+02:00) as an instant.
    static func t(_ day: Int, _ hour: Int, _ minute: Int) -> Timestamp {
        let local = Int64(Self.days("2026-10-\(day < 10 ? "0" : "")\(day)")) * 86_400_000 + Int64(hour * 60 + minute) * 60_000
        return Timestamp(epochMilliseconds: local - 7_200_000, utcOffsetSeconds: 7200)
    }

    /// An iPhone and a Watch counting steps over the same minutes (times in Berlin, 3 and 4 October 2026):
    ///
    /// | source | from | to | steps |
    /// |---|---|---|---|
    /// | iPhone14,5 | 09:00 | 09:10 | 1000 |
    /// | Watch6,2 | 09:05 | 09:15 | 600 |
    /// | iPhone14,5 | 12:00 | 12:10 | 300 |
    /// | Watch6,2 | 23:50 | 00:10 (4th) | 200 |
    /// | iPhone14,5 | 00:00 (4th) | 00:20 | 400 |
    /// | Health (a manual point) | 09:07 | — | 50 |
    /// | Health (a manual point) | 15:00 | — | 20 |
    static func overlapping(_ priority: SourcePriority = SourcePriority()) -> DailyTotals {
        var totals = DailyTotals(priority: priority)
        totals.add(start: t(3, 9, 0), end: t(3, 9, 10), value: 1000, source: "iPhone14,5")
        totals.add(start: t(3, 9, 5), end: t(3, 9, 15), value: 600, source: "Watch6,2")
        totals.add(start: t(3, 12, 0), end: t(3, 12, 10), value: 300, source: "iPhone14,5")
        totals.add(start: t(3, 23, 50), end: t(4, 0, 10), value: 200, source: "Watch6,2")
        totals.add(start: t(4, 0, 0), end: t(4, 0, 20), value: 400, source: "iPhone14,5")
        totals.add(start: t(3, 9, 7), end: nil, value: 50, source: "Health")
        totals.add(start: t(3, 15, 0), end: t(3, 15, 0), value: 20, source: "Health")
        return totals
    }

    /// Watch first (the default): the watch counts whole (600; 200 split 100 + 100 at midnight);
    /// the iPhone's 09:00–09:10 loses 09:05–09:10 to the watch (500), 12:00 counts whole (300),
    /// 00:00–00:20 loses 00:00–00:10 (200); the 09:07 point is inside the watch's interval
    /// (dropped), the 15:00 point counts (20).
    /// 3 Oct: 600 + 100 + 500 + 300 + 20 = 1520; 4 Oct: 100 + 200 = 300 (a plain sum: 2170 and 400).
    @Test func watchBeforePhoneByDefault() {
        let totals = Self.overlapping().totals(in: Self.berlin)
        #expect(totals.map(\.day.description) == ["2026-10-03", "2026-10-04"])
        #expect(totals.map(\.value) == [1520, 300])
        #expect(totals.map(\.samplesCounted) == [5, 2])
    }

    /// `source_priority: [iPhone, Apple Watch]`: the iPhone counts whole (1300 on the 3rd, 400 on
    /// the 4th); the watch's 09:05–09:15 keeps 09:10–09:15 (300), its 23:50–00:10 keeps
    /// 23:50–00:00 (100); the 09:07 point is inside the iPhone's interval, 15:00 counts (20).
    /// 3 Oct: 1000 + 300 + 300 + 100 + 20 = 1720; 4 Oct: 400.
    @Test func theProtocolsPriorityWins() {
        let totals = Self.overlapping(SourcePriority(["iPhone", "Apple Watch"])).totals(in: Self.berlin)
        #expect(totals.map(\.value) == [1720, 400])
    }

    @Test func samplesOfOneSourceNeverCancelEachOther() {
        var totals = DailyTotals()
        totals.add(start: Self.t(3, 9, 0), end: Self.t(3, 9, 10), value: 100, source: "Watch6,2")
        totals.add(start: Self.t(3, 9, 5), end: Self.t(3, 9, 15), value: 100, source: "Watch6,2")
        #expect(totals.totals(in: Self.berlin).map(\.value) == [200])
    }

    /// 2026-03-29 in Berlin has 23 hours: a sample from 23:00 on the 28th (+01:00) to 01:00 UTC on
    /// the 29th (03:00 +02:00) is 3 hours long; one hour lies on the 28th.
    @Test func localMidnightOnADSTDay() {
        var totals = DailyTotals()
        let start = Timestamp(epochMilliseconds: Int64(Self.days("2026-03-28")) * 86_400_000 + 22 * 3_600_000)
        let end = Timestamp(epochMilliseconds: start.epochMilliseconds + 3 * 3_600_000)
        totals.add(start: start, end: end, value: 300, source: "iPhone")
        let result = totals.totals(in: Self.berlin)
        #expect(result.map(\.day.description) == ["2026-03-28", "2026-03-29"])
        #expect(result.map(\.value) == [100, 200])
    }

    @Test(arguments: [("Watch6,2", 0), ("Apple Watch", 0), ("Garmin Venu watch", 0), ("iPhone14,5", 1), ("phone", 1), ("Withings", 2), ("", 2)])
    func deviceClasses(source: String, rank: Int) {
        #expect(SourcePriority().rank(source) == rank)
        #expect(SourcePriority(["Withings"]).rank(source) == (source == "Withings" ? 0 : rank + 1))
    }
}
