import Foundation
import Testing

/// `cohort-bench` end to end on a tiny cohort (6 participants, seed 1: nobody is suppressed for k-anonymity): every phase runs in its own process and passes,
/// the references are timed in the same run, and the JSON carries what the README promises.
struct BenchCLITests {
    static var binary: URL { CLI.binary.deletingLastPathComponent().appendingPathComponent("cohort-bench") }

    func run(_ args: [String]) throws -> (Int32, Data) {
        let (status, data, _) = try runCapturingStderr(args)
        return (status, data)
    }

    func runCapturingStderr(_ args: [String]) throws -> (Int32, Data, String) {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = args
        process.currentDirectoryURL = CLI.repoRoot
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // stderr is small (no progress through a pipe); read it after stdout.
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, data, String(decoding: errors, as: UTF8.self))
    }

    @Test func benchmarkMeasuresEveryPhaseAgainstItsReferences() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let dir = cli.path("bench")
        let (status, data, errors) = try runCapturingStderr(["--participants", "6", "--seed", "1", "--dir", dir, "--compression", "fast", "--json"])
        #expect(status == 0)
        #expect(!errors.contains("\r") && !errors.contains("records/s") && !errors.contains("· "), "no progress and no notes through a pipe: \(errors)")
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(String(decoding: data, as: UTF8.self))")
        let size = try #require((document["sizes"] as? [[String: Any]])?.first)
        #expect(size["compression"] as? String == "fast")
        let phases = try #require(size["phases"] as? [[String: Any]])
        #expect(phases.compactMap { $0["phase"] as? String } == ["import", "export-tables", "export", "verify", "verify-scan"])
        for phase in phases {
            #expect(phase["passed"] as? Bool == true, "\(phase)")
            #expect((phase["seconds"] as? Double ?? 0) > 0 && (phase["peak_rss_bytes"] as? Int ?? 0) > 0, "\(phase)")
        }
        let imported = phases[0]["records"] as? Int ?? 0
        // Hourly samples in a spring-forward gap land on the next hour and count as duplicates.
        let generated = size["records_generated"] as? Int ?? 0
        #expect(imported > 1_000 && imported <= generated && imported * 100 >= generated * 99, "the generated records are imported")
        let tables = phases[1], export = phases[2]
        for phase in [tables, export] {
            #expect((phase["records"] as? Int ?? 0) > 0 && (phase["payload_bytes"] as? Int ?? 0) > (phase["output_bytes"] as? Int ?? 0))
            #expect((phase["detail"] as? String ?? "").contains("write"), "export stages are reported")
        }
        // The same records either way; without FHIR the payload is smaller and has fewer files.
        #expect(tables["records"] as? Int == export["records"] as? Int)
        #expect((tables["payload_bytes"] as? Int ?? 0) < (export["payload_bytes"] as? Int ?? 0))
        func files(_ phase: [String: Any]) -> Int? {
            (phase["detail"] as? String)?.split(separator: ";").first?.split(separator: ",").last?.split(separator: " ").first.flatMap { Int($0) }
        }
        #expect((files(tables) ?? 0) > 0 && (files(tables) ?? 0) < (files(export) ?? 0), "no FHIR files in the CSV + JSON export")
        let references = try #require(size["references"] as? [[String: Any]])
        #expect(references.compactMap { $0["command"] as? String } == ["gzip -1 -c payload.tar > /dev/null", "gzip -dc ARCHIVE | sha256sum"])
        let ratios = try #require(size["ratios"] as? [String: Any])
        #expect(ratios["export_over_gzip"] is Double && ratios["verify_over_inflate_sha256"] is Double)
        #expect((size["targets"] as? [Any])?.count == 4)
        #expect(!FileManager.default.fileExists(atPath: dir), "without --keep the working folder is removed")
    }

    // Needs a pseudo-terminal (util-linux `script`): always runs in CI, elsewhere only where installed.
    @Test(.enabled(if: ProgressCLITests.terminalAvailable, "needs /usr/bin/script for a pseudo-terminal; skipped: not installed"))
    func eachPhaseDrawsAProgressLineOnATerminalUnlessQuiet() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let args = ["--participants", "3", "--seed", "1", "--dir", cli.path("bench"), "--compression", "fast"]
        let shown = try ProgressCLITests.onTerminal(args, binary: Self.binary)
        #expect(shown.status == 0, "\(shown.screen)")
        for line in ["\r\u{1B}[Kimport  [", "records/s", "\r\u{1B}[Kexport  [", "\r\u{1B}[Kexport-tables  [", "participants/s", "\r\u{1B}[Kverify  [", "\r\u{1B}[Kverify-scan  [", "MB/s  ETA"] {
            #expect(shown.screen.contains(line), "\(line.debugDescription) on the terminal: \(shown.screen)")
        }
        #expect(shown.screen.contains("/s  ETA"), "an ETA where the total is known")
        let quiet = try ProgressCLITests.onTerminal(args + ["--quiet"], binary: Self.binary)
        #expect(quiet.status == 0, "\(quiet.screen)")
        #expect(!quiet.screen.contains("\u{1B}[K") && !quiet.screen.contains("· "), "--quiet: no progress, no notes: \(quiet.screen)")
        #expect(quiet.screen.contains("import records/s"), "the results are still printed")
    }

    @Test func unknownSizeIsAUsageError() throws {
        let (status, _) = try run(["--size", "XXL"])
        #expect(status == 64)
    }
}
