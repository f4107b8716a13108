import CohortTestSupport
import Foundation
import Testing

/// Progress on stderr: `verify` and `report --export` draw a byte bar with MB/s and ETA on a
/// terminal (a pseudo-terminal from util-linux `script`), and nothing through a pipe or with `--quiet`.
@Suite(.serialized)
struct ProgressCLITests {
    static let script = "/usr/bin/script"
    /// `script` gives the command a terminal; CI must have it (the test fails there without it).
    static var terminalAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: script) || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    /// Runs `cohort args…` with stdin, stdout and stderr on a pseudo-terminal; returns what it drew.
    static func onTerminal(_ args: [String], binary: URL = CLI.binary) throws -> (status: Int32, screen: String) {
        try #require(FileManager.default.isExecutableFile(atPath: script), "needs \(script) (Debian package bsdutils/util-linux)")
        let quoted = ([binary.path] + args).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        var env = ProcessInfo.processInfo.environment
        env["COHORT_WORKSPACE"] = nil
        let outcome = try ChildProcess.run(script, ["-qec", quoted, "/dev/null"], environment: env, directory: CLI.repoRoot.path, mergingErrors: true)
        return (outcome.status, String(decoding: outcome.stdout, as: UTF8.self))
    }

    static func demo() throws -> (CLI, archive: String) {
        let cli = try CLI()
        let r = try cli.run(["demo", "--dir", cli.workspace, "--participants", "8", "--seed", "5"])
        try #require(r.status == 0, "demo failed: \(r.output)")
        let exports = cli.workspace + "/exports"
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: exports).filter { $0.hasSuffix(".tar.gz") }.sorted().last)
        return (cli, exports + "/" + name)
    }

    @Test func verifyDrawsNoProgressThroughAPipe() throws {
        let (cli, archive) = try Self.demo()
        defer { cli.cleanup() }
        let verified = try cli.run(["verify", archive, "-w", cli.workspace])
        #expect(verified.status == 0, "\(verified.output)")
        #expect(!verified.stderr.contains("\r") && !verified.stderr.contains("verifying") && !verified.stderr.contains("MB/s"), "\(verified.stderr)")
        let report = try cli.ws("report", "--out", cli.path("r.html"), "--export", archive)
        #expect(report.status == 0, "\(report.output)")
        #expect(!report.stderr.contains("\r") && !report.stderr.contains("MB/s"), "\(report.stderr)")
    }

    // Needs a pseudo-terminal (util-linux `script`): always runs in CI, elsewhere only where installed.
    @Test(.enabled(if: terminalAvailable, "needs /usr/bin/script for a pseudo-terminal; skipped: not installed"))
    func verifyAndReportDrawAByteBarOnATerminalUnlessQuiet() throws {
        let (cli, archive) = try Self.demo()
        defer { cli.cleanup() }
        let name = URL(fileURLWithPath: archive).lastPathComponent
        let shown = try Self.onTerminal(["verify", archive, "-w", cli.workspace])
        #expect(shown.status == 0, "\(shown.screen)")
        #expect(shown.screen.contains("verifying \(name)  ["), "\(shown.screen)")
        #expect(shown.screen.contains(" MB/s") && shown.screen.contains("\r\u{1B}[K"), "bar with a rate, cleared: \(shown.screen)")
        #expect(shown.screen.contains("checks passed"), "the results follow the cleared bar")

        let quiet = try Self.onTerminal(["verify", archive, "-w", cli.workspace, "--quiet"])
        #expect(quiet.status == 0 && !quiet.screen.contains("MB/s") && !quiet.screen.contains("verifying \(name)"), "\(quiet.screen)")

        let report = try Self.onTerminal(["report", "--out", cli.path("r.html"), "--export", archive, "-w", cli.workspace])
        #expect(report.status == 0, "\(report.screen)")
        #expect(report.screen.contains("verifying \(name)  [") && report.screen.contains(" MB/s"), "\(report.screen)")
    }
}
