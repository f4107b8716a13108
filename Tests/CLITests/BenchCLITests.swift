import Foundation
import Testing

/// `cohort-bench` end to end on a tiny cohort (6 participants, seed 1: nobody is suppressed for k-anonymity): every phase runs in its own process and passes,
/// the references are timed in the same run, and the JSON carries what the README promises.
struct BenchCLITests {
    static var binary: URL { CLI.binary.deletingLastPathComponent().appendingPathComponent("cohort-bench") }

    func run(_ args: [String]) throws -> (Int32, Data) {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = args
        process.currentDirectoryURL = CLI.repoRoot
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, data)
    }

    @Test func benchmarkMeasuresEveryPhaseAgainstItsReferences() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let dir = cli.path("bench")
        let (status, data) = try run(["--participants", "6", "--seed", "1", "--dir", dir, "--compression", "fast", "--json"])
        #expect(status == 0)
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(String(decoding: data, as: UTF8.self))")
        let size = try #require((document["sizes"] as? [[String: Any]])?.first)
        #expect(size["compression"] as? String == "fast")
        let phases = try #require(size["phases"] as? [[String: Any]])
        #expect(phases.compactMap { $0["phase"] as? String } == ["import", "export", "verify", "verify-scan"])
        for phase in phases {
            #expect(phase["passed"] as? Bool == true, "\(phase)")
            #expect((phase["seconds"] as? Double ?? 0) > 0 && (phase["peak_rss_bytes"] as? Int ?? 0) > 0, "\(phase)")
        }
        let imported = phases[0]["records"] as? Int ?? 0
        // Hourly samples in a spring-forward gap land on the next hour and count as duplicates.
        let generated = size["records_generated"] as? Int ?? 0
        #expect(imported > 1_000 && imported <= generated && imported * 100 >= generated * 99, "the generated records are imported")
        #expect((phases[1]["records"] as? Int ?? 0) > 0 && (phases[1]["payload_bytes"] as? Int ?? 0) > (phases[1]["output_bytes"] as? Int ?? 0))
        #expect((phases[1]["detail"] as? String ?? "").contains("write"), "export stages are reported")
        let references = try #require(size["references"] as? [[String: Any]])
        #expect(references.compactMap { $0["command"] as? String } == ["gzip -1 -c payload.tar > /dev/null", "gzip -dc ARCHIVE | sha256sum"])
        let ratios = try #require(size["ratios"] as? [String: Any])
        #expect(ratios["export_over_gzip"] is Double && ratios["verify_over_inflate_sha256"] is Double)
        #expect((size["targets"] as? [Any])?.count == 4)
        #expect(!FileManager.default.fileExists(atPath: dir), "without --keep the working folder is removed")
    }

    @Test func unknownSizeIsAUsageError() throws {
        let (status, _) = try run(["--size", "XL"])
        #expect(status == 64)
    }
}
