import Foundation
import Testing

/// `cohort-bench scrub` end to end: the scrubber's table on a small adversarial corpus, the
/// corpus written as JSON lines with cohort's output, and scrubadub on the same notes through
/// Tests/interop/compare_scrubadub.py, whose own recomputation of cohort's recall must agree.
struct ScrubBenchCLITests {
    static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    func run(_ args: [String]) throws -> (Int32, String) {
        let (status, data) = try BenchCLITests().run(args)
        return (status, String(decoding: data, as: UTF8.self))
    }

    @Test func measuresTheScrubberAndWritesTheCorpus() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let file = cli.path("corpus.jsonl")
        let (status, output) = try run(["scrub", "--participants", "40", "--notes", "400", "--clean-notes", "100", "--write-corpus", file, "--no-compare"])
        #expect(status == 0)
        #expect(output.contains("leaks: full names 0, emails 0, phones 0, unshifted dates 0"), "\(output)")
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 500)
        let first = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(first["cohort_output"] is String && first["plants"] is [Any] && first["shift_days"] is Int)
    }

    // Needs scrubadub in .venv (scripts/setup-venv.sh); in CI (CI=true) a missing .venv fails.
    @Test(.enabled(if: ExportCLITests.hasPython || isCI, "no .venv/bin/python: run scripts/setup-venv.sh"))
    func comparesWithScrubadub() throws {
        try #require(ExportCLITests.hasPython, "CI must have .venv with scrubadub (scripts/setup-venv.sh)")
        let (status, output) = try run(["scrub", "--participants", "40", "--notes", "400", "--clean-notes", "100"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("scrubadub 2.0.1"), "\(output)")
        #expect(output.contains("does not know the roster"))
        // The script's own recomputation of cohort's recall ("all" row, last column).
        let all = try #require(output.split(separator: "\n").last { $0.hasPrefix("all ") && !$0.contains("target") })
        let cohort = try #require(Double(all.split(separator: " ").last?.dropLast() ?? ""))
        #expect(cohort >= 99.0, "\(all)")
    }
}

extension ScrubBenchCLITests {
    /// Without `.venv-compare` the Presidio/scrubadub comparison is not measured, and says so on a
    /// line of its own (the bench is no CI step); the corpus is still scored.
    @Test func theToolComparisonSaysWhenItIsNotMeasured() throws {
        let process = Process()
        process.executableURL = BenchCLITests.binary
        process.arguments = ["scrub", "--participants", "10", "--notes", "20", "--clean-notes", "5", "--template-corpus"]
        process.currentDirectoryURL = CLI.repoRoot
        var environment = ProcessInfo.processInfo.environment
        environment["COHORT_COMPARE_VENV"] = FileManager.default.temporaryDirectory.appendingPathComponent("no-venv-\(UUID().uuidString)").path
        process.environment = environment
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output)")
        #expect(output.contains("cohort scrubber on the template corpus"), "\(output)")
        #expect(output.contains("not measured: Presidio and scrubadub on the template corpus: no .venv-compare, run scripts/setup-compare-venv.sh"), "\(output)")
    }
}
