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
}
