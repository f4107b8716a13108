import CohortCore
import Foundation
import Testing

@testable import CohortDeid

/// Issue 27: a heart rate every 5 minutes across the real daylight-saving nights of 2026 (both
/// directions) in New York, Berlin and Sydney, with a daily 90-minute charging gap, shows after
/// shifting neither a gap, nor duplicate instants, nor a changed cadence.
struct DenseSeriesShiftTests {
    static let zones = ["America/New_York", "Europe/Berlin", "Australia/Sydney"]
    static let fiveMinutes: Int64 = 300_000

    /// The real transitions of `zone` in 2026 (UTC milliseconds).
    static func transitions(_ zone: TimeZone) -> [Int64] {
        var result: [Int64] = []
        var date = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01
        while let next = zone.nextDaylightSavingTimeTransition(after: date), next.timeIntervalSince1970 < 1_798_761_600 {
            result.append(Int64(next.timeIntervalSince1970 * 1000))
            date = next
        }
        return result
    }

    /// A 5-minute series from two days before to two days after `transition`, without the
    /// samples whose local time is 18:00–19:29 (the watch charges).
    static func series(around transition: Int64, in zone: TimeZone) -> [Int64] {
        var result: [Int64] = []
        var t = transition - 2 * 86_400_000
        while t < transition + 2 * 86_400_000 {
            let local = (t / 1000 + Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(t) / 1000)))) % 86_400
            if !(64_800..<70_200).contains(local) { result.append(t) }
            t += fiveMinutes
        }
        return result
    }

    /// Steps between consecutive published instants that a 5-minute series with natural gaps of
    /// 30 minutes or more cannot have: duplicates, and anything from 1 to 29 minutes but 5.
    static func anomalies(_ published: [Int64]) -> (duplicates: Int, oddSteps: Int, gaps: Int) {
        var duplicates = 0, odd = 0, gaps = 0
        for (a, b) in zip(published, published.dropFirst()) {
            let step = b - a
            if step <= 0 { duplicates += 1 } else if step >= ParticipantShift.denseGapMs { gaps += 1 } else if step != fiveMinutes { odd += 1 }
        }
        return (duplicates, odd, gaps)
    }

    @Test(arguments: zones)
    func realTransitionNightsLeaveNoTrace(zoneName: String) throws {
        let zone = try #require(TimeZone(identifier: zoneName))
        let nights = Self.transitions(zone)
        #expect(nights.count == 2, "one transition each way")
        var g = SeededRandom(seed: 27)
        var oldTraces = 0
        for night in nights {
            let real = Self.series(around: night, in: zone)
            let realGaps = Self.anomalies(real).gaps
            for _ in 0..<16 {
                let days = -Int.random(in: 1...182, using: &g)
                let reference = Timestamp(epochMilliseconds: 1_798_761_600_000)
                var shift = ParticipantShift(days: days, zone: zone, reference: reference)
                var old = ParticipantShift(days: days, zone: zone, reference: reference)
                let published = real.map { shift.shiftSeries(.heartRate, start: Timestamp(epochMilliseconds: $0), end: nil).start.epochMilliseconds }
                let found = Self.anomalies(published)
                #expect(found.duplicates == 0 && found.oddSteps == 0, "shift \(days): \(found)")
                #expect(found.gaps == realGaps, "no gap the data did not have (shift \(days))")
                #expect(published == published.sorted())
                // The wall clock is rejoined: the last sample sits at its wall-clock place.
                if let last = real.last, let lastPublished = published.last {
                    #expect(lastPublished == old.shift(Timestamp(epochMilliseconds: last)).epochMilliseconds)
                }
                // The old re-anchoring, sample by sample, does leave the trace.
                let plain = real.map { old.shift(Timestamp(epochMilliseconds: $0)).epochMilliseconds }
                let trace = Self.anomalies(plain)
                if trace.duplicates > 0 || trace.gaps > realGaps || trace.oddSteps > 0 { oldTraces += 1 }
            }
        }
        #expect(oldTraces >= 30, "the old way shows the transition for nearly every shift (\(oldTraces) of 32)")
    }

    @Test func localDayAggregatesStayLocalDaysAndTheStartKeepsItsWallClock() throws {
        let zone = try #require(TimeZone(identifier: "Europe/Berlin"))
        var shift = ParticipantShift(days: -40, zone: zone, reference: Timestamp(epochMilliseconds: 1_798_761_600_000))
        // The real 2026-03-29 (23 hours) as a daily step count, one day after the other.
        let day0 = try #require(Timestamp.parse("2026-03-28T00:00:00+01:00", defaultTimeZone: nil))
        let day1 = try #require(Timestamp.parse("2026-03-29T00:00:00+01:00", defaultTimeZone: nil))
        let day2 = try #require(Timestamp.parse("2026-03-30T00:00:00+02:00", defaultTimeZone: nil))
        _ = shift.shiftSeries(.steps, start: day0, end: day1)
        let (start, end) = shift.shiftSeries(.steps, start: day1, end: day2)
        let length = try #require(end).epochMilliseconds - start.epochMilliseconds
        #expect(length == 86_400_000, "2026-02-17 in Berlin is an ordinary day")
    }
}
