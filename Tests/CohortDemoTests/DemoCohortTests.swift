import CohortCore
import Foundation
import Testing

@testable import CohortDemo

/// The synthetic cohort the demo and the benchmark import.
struct DemoCohortTests {
    /// A sleep record's value (hours) never exceeds its own period: an analyst computing sleep
    /// efficiency (value ÷ period) must never see more than 100%.
    @Test func sleepNeverExceedsItsPeriod() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("demo-sleep-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let lastDay = try #require(CivilDate(year: 2026, month: 3, day: 31))
        let files = try DemoCohort(seed: 42, participants: 20, days: 60, lastDay: lastDay).write(to: directory)
        let wearable = try #require(files.data.first { $0.lastPathComponent == "wearable.ndjson" })
        var checked = 0
        for line in String(decoding: try Data(contentsOf: wearable), as: UTF8.self).split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            guard object["kind"] as? String == "sleep_duration" else { continue }
            let startText = try #require(object["start"] as? String), endText = try #require(object["end"] as? String)
            let start = try #require(Timestamp.parse(startText, defaultTimeZone: nil))
            let end = try #require(Timestamp.parse(endText, defaultTimeZone: nil))
            let hours = try #require(object["value"] as? Double)
            let period = Double(end.epochMilliseconds - start.epochMilliseconds) / 3_600_000
            #expect(hours <= period + 1e-9, "sleep of \(hours) h in a period of \(period) h")
            #expect(hours > 0)
            checked += 1
        }
        #expect(checked > 500)
    }
}
