import Foundation
import Testing

/// `cohort-bench fhir` at the small size: the import runs through the real FHIR importer, stores
/// exactly the Observations of collected kinds it wrote (recounted from the NDJSON and from the
/// database, each on its own), and stays under the memory target.
struct FHIRBenchCLITests {
    @Test func benchImportsEveryCollectedObservationWithinTheMemoryTarget() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let dir = cli.path("fhirbench")
        let process = Process()
        process.executableURL = BenchCLITests.binary
        process.arguments = ["fhir", "--size", "S", "--dir", dir, "--json"]
        process.currentDirectoryURL = CLI.repoRoot
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(String(decoding: data, as: UTF8.self))")
        #expect(report["observations_written"] as? Int == 10_000)

        // From the NDJSON itself: Observations whose top-level code is one the demo protocol collects.
        let ndjson = try String(contentsOfFile: dir + "/bulk/Observation.ndjson", encoding: .utf8)
        let lines = ndjson.split(separator: "\n")
        #expect(lines.count == 10_000)
        let collected = ["8867-4", "40443-4", "80404-7", "41950-7", "93832-4"]
        let expected = lines.filter { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let code = object["code"] as? [String: Any], let codings = code["coding"] as? [[String: Any]], let first = codings.first?["code"] as? String
            else { return false }
            return collected.contains(first)
        }.count
        #expect(expected > 5_000)
        #expect(expected < 10_000)  // SpO2 (not collected) and blood-pressure panels (no kind) are left out

        // From the database.
        let (status, rows) = try CLI.tool("/usr/bin/sqlite3", [dir + "/ws/study.db", "SELECT count(*) FROM records"])
        #expect(status == 0)
        let stored = Int(rows.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect(stored == expected)
        #expect(report["records_inserted"] as? Int == stored)
        #expect((report["records_per_second"] as? Int ?? 0) > 0)
        #expect((report["peak_rss_bytes"] as? Int ?? .max) <= 100 << 20)
    }
}
