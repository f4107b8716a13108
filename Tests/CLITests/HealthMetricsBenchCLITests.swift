import CohortPostgres
import Foundation
import Testing

/// `cohort-bench health-metrics` at the small size: a throwaway cluster's table filled by COPY,
/// imported over its URL with the user map; what the database then holds is recounted per kind
/// with sqlite3 and checked against the rows the bench wrote, within the memory target.
struct HealthMetricsBenchCLITests {
    // In CI a missing PostgreSQL fails the test (ScratchCluster throws); elsewhere it is skipped and the reason printed.
    @Test(.enabled(if: HealthMetricsCLITests.hasPostgres, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func benchImportsTheTableOverItsURLWithinTheMemoryTarget() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let dir = cli.path("hmbench")
        let process = Process()
        process.executableURL = BenchCLITests.binary
        process.arguments = ["health-metrics", "--size", "S", "--dir", dir, "--json"]
        process.currentDirectoryURL = CLI.repoRoot
        let out = Pipe()
        process.standardOutput = out
        let err = Pipe()
        process.standardError = err
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(String(decoding: errors, as: UTF8.self))")
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(String(decoding: data, as: UTF8.self))")
        // 5 users × 100 days, the last 85 of them inside the study period (enrolled 2026-01-01, 90 days).
        #expect(report["rows_in_table"] as? Int == 500)
        #expect(report["rows_seen"] as? Int == 500)
        // Every in-period row has steps, heart_rate_avg, heart_rate_resting and sleep_hours; HRV is
        // missing on every third day (day 0, 3, … back from the last): 85 - 29 = 56 per user.
        let (status, rows) = try CLI.tool("/usr/bin/sqlite3", [dir + "/ws/study.db", "SELECT kind || '=' || count(*) FROM records GROUP BY kind ORDER BY kind"])
        #expect(status == 0)
        #expect(rows.split(separator: "\n").map(String.init) == [
            "heart_rate=425", "hrv_sdnn=280", "resting_heart_rate=425", "sleep_duration=425", "steps=425",
        ])
        #expect(report["records_inserted"] as? Int == 4 * 425 + 280)
        #expect((report["rows_per_second"] as? Int ?? 0) > 0)
        #expect((report["peak_rss_bytes"] as? Int ?? .max) <= 100 << 20)
    }
}
