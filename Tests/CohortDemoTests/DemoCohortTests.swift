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

    /// `heartRateMinutes` multiplies the heart-rate samples (the bench's XL-dense size); with the
    /// default `[0]` the files are the same as without it (M, L and XL keep their data).
    @Test func heartRateMinutesAddSamplesWithinEachHour() throws {
        let lastDay = try #require(CivilDate(year: 2026, month: 3, day: 31))
        func heartRates(_ minutes: [Int]?) throws -> (lines: [String], other: Int) {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("demo-hr-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            var cohort = DemoCohort(seed: 7, participants: 3, days: 10, lastDay: lastDay)
            if let minutes { cohort.heartRateMinutes = minutes }
            let files = try cohort.write(to: directory)
            let wearable = try #require(files.data.first { $0.lastPathComponent == "wearable.ndjson" })
            let lines = String(decoding: try Data(contentsOf: wearable), as: UTF8.self).split(separator: "\n").map(String.init)
            let hr = lines.filter { $0.contains("\"kind\":\"heart_rate\"") }
            return (hr, lines.count - hr.count)
        }
        let plain = try heartRates(nil)
        let explicit = try heartRates([0])
        let dense = try heartRates([0, 20, 40])
        #expect(plain.lines == explicit.lines)
        // The random draws per day change, so which days have wearable data may too: compare per day.
        #expect(dense.lines.count % 3 == 0)
        #expect(Double(dense.lines.count) / Double(max(1, dense.other)) > 2.5 * Double(plain.lines.count) / Double(max(1, plain.other)))
        let minutes = Set(dense.lines.compactMap { line in line.range(of: "T\\d\\d:\\d\\d", options: .regularExpression).map { String(line[$0].suffix(2)) } })
        #expect(minutes == ["00", "20", "40"])
    }
}
