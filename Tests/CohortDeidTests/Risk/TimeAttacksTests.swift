import CohortCore
import Foundation
import Testing

@testable import CohortDeid

/// The DST-trace attack on a dense series: it recovers the shift from the old sample-by-sample
/// re-anchoring and learns nothing from ``ParticipantShift/shiftSeries(_:start:end:)``.
struct TimeAttacksTests {
    @Test(arguments: DenseSeriesShiftTests.zones)
    func theDSTAttackRecoversTheOldWayAndNotTheNew(zoneName: String) throws {
        let zone = try #require(TimeZone(identifier: zoneName))
        let reference = Timestamp(epochMilliseconds: 1_798_761_600_000)
        let standard = ParticipantShift.standardOffset(of: zone, at: reference)
        var g = SeededRandom(seed: 13)
        var old: [String: [TimeAttacks.Row]] = [:]
        var new: [String: [TimeAttacks.Row]] = [:]
        var truth: [String: Int] = [:]
        for (n, night) in DenseSeriesShiftTests.transitions(zone).enumerated() {
            for i in 0..<8 {
                let name = "\(n)-\(i)"
                let days = -Int.random(in: 1...182, using: &g)
                truth[name] = days
                var a = ParticipantShift(days: days, zone: zone, reference: reference)
                var b = ParticipantShift(days: days, zone: zone, reference: reference)
                for t in DenseSeriesShiftTests.series(around: night, in: zone) {
                    let instant = Timestamp(epochMilliseconds: t)
                    old[name, default: []].append(.init(kind: "heart_rate", start: a.shift(instant).epochMilliseconds, end: nil, offsetSeconds: standard, value: 60))
                    new[name, default: []].append(
                        .init(kind: "heart_rate", start: b.shiftSeries(.heartRate, start: instant, end: nil).start.epochMilliseconds, end: nil, offsetSeconds: standard, value: 60))
                }
            }
        }
        let offsets = truth.mapValues { _ in standard }
        let before = TimeAttacks(range: -182...(-1), createdDay: nil, timelines: old, offsets: offsets)
        let after = TimeAttacks(range: -182...(-1), createdDay: nil, timelines: new, offsets: offsets)
        let recovered = truth.filter { before.candidates["dst"]?[$0.key] == [$0.value] }.count
        print("DST attack, \(zoneName): old way \(recovered) of 16 recovered; new way \(after.candidates["dst"]?.count ?? 0) with any inference")
        #expect(recovered >= 14, "the old way: \(recovered) of 16 recovered")
        #expect(after.candidates["dst"]?.isEmpty ?? true, "the new way: nothing learned")
    }

    /// Times written in UTC (k-anonymity generalized `utc_offset`): the shifted calendar's own
    /// transition (public, the same for every shift) must not be read a day off and taken for a
    /// real one. A Sydney participant's daily step count and 08:00 log, 2026-08-20 to 09-20,
    /// shifted back 153 days onto a window holding Sydney's 2026-04-05 transition.
    @Test func aShiftedCalendarTransitionInUTCTellsNothing() throws {
        let zone = try #require(TimeZone(identifier: "Australia/Sydney"))
        var shift = ParticipantShift(days: -153, zone: zone, reference: Timestamp(epochMilliseconds: 1_798_761_600_000), publishedOffsetSeconds: 0)
        var rows: [TimeAttacks.Row] = []
        var day = try #require(CivilDate(year: 2026, month: 8, day: 20))
        while day <= (CivilDate(year: 2026, month: 9, day: 20) ?? day) {
            func local(_ date: CivilDate, _ hour: Int) -> Timestamp {
                let guess = Int64(date.daysSinceEpoch) * 86_400_000 + Int64(hour) * 3_600_000
                return Timestamp(epochMilliseconds: guess - Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(guess) / 1000 - 36_000))) * 1000)
            }
            let (start, end) = shift.shiftSeries(.steps, start: local(day, 0), end: local(day.adding(days: 1), 0))
            rows.append(.init(kind: "steps", start: start.epochMilliseconds, end: end?.epochMilliseconds, offsetSeconds: 0, value: 8000))
            let pain = shift.shiftSeries(.pain, start: local(day, 8), end: nil).start
            rows.append(.init(kind: "pain", start: pain.epochMilliseconds, end: nil, offsetSeconds: 0, value: 3))
            day = day.adding(days: 1)
        }
        #expect(rows.contains { row in row.end.map { $0 - row.start == 90_000_000 } ?? false }, "the shifted calendar's 25-hour day is there")
        let attacks = TimeAttacks(range: -182...(-1), createdDay: nil, timelines: ["P": rows], offsets: ["P": 0])
        #expect(attacks.candidates["dst"]?["P"] == nil, "inferred \(attacks.candidates["dst"]?["P"]?.sorted() ?? [])")
    }
}
