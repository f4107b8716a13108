import Foundation
import Testing

/// `cohort-bench applehealth` on a small export: the import runs, counts every sample it wrote,
/// stores what the database then holds, and stays under the memory target.
struct AppleHealthBenchCLITests {
    @Test func benchImportsEverySampleItWritesWithinTheMemoryTarget() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let dir = cli.path("ahbench")
        let process = Process()
        process.executableURL = BenchCLITests.binary
        process.arguments = ["applehealth", "--samples", "5000", "--dir", dir, "--no-compare", "--json"]
        process.currentDirectoryURL = CLI.repoRoot
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(String(decoding: data, as: UTF8.self))")
        #expect(report["samples_written"] as? Int == 5001)  // and one workout
        #expect(report["samples_seen"] as? Int == 5001)
        // Recounted from the database itself.
        let (status, rows) = try CLI.tool("/usr/bin/sqlite3", [dir + "/ws/study.db", "SELECT count(*) FROM records"])
        #expect(status == 0)
        let stored = Int(rows.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect(report["records_imported"] as? Int == stored)
        #expect(stored > 2500)  // heart rate, steps, HRV, resting HR and sleep stages of the 5000
        #expect((report["peak_rss_bytes"] as? Int ?? .max) < 100 << 20)
    }
}
