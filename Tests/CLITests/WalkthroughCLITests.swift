import CohortTestSupport
import Foundation
import Testing

/// The README's walkthrough, run as written: its ```sh blocks are read from README.md itself and
/// run in order, in one bash (-euo pipefail) in an empty folder with the built `cohort` first on
/// PATH — so the page and the tool cannot drift. The demo summary shown in the README is checked
/// against what the deterministic demo prints.
@Suite(.serialized) struct WalkthroughCLITests {
    static var readme: String {
        get throws { try String(contentsOf: CLI.repoRoot.appendingPathComponent("README.md"), encoding: .utf8) }
    }

    /// The ```sh blocks between `## Walkthrough` and the next heading of the same or a higher level.
    static func walkthroughBlocks(_ text: String) -> [String] {
        guard let start = text.range(of: "\n## Walkthrough\n") else { return [] }
        let rest = text[start.upperBound...]
        let end = rest.range(of: "\n## ")?.lowerBound ?? rest.range(of: "\n### ")?.lowerBound ?? rest.endIndex
        let section = rest[..<min(end, rest.range(of: "\n### ")?.lowerBound ?? rest.endIndex)]
        return shBlocks(section)
    }

    /// The ```sh blocks of a page's section, each as one script (also the multi-site walkthrough's).
    static func shBlocks(_ section: Substring) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in section.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```sh" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append((current ?? []).joined(separator: "\n"))
                current = nil
            } else if current != nil {
                current?.append(line)
            }
        }
        return blocks
    }

    /// Runs `script` with bash in `directory`, the built binary's folder first on PATH. With
    /// `logFile`, standard output goes to that file, created mode 0644 as a shell's `> log` makes
    /// it (a log others may read, where a command must not print secrets), and is read back.
    static func bash(_ script: String, in directory: URL, logFile: URL? = nil) throws -> CLI.Result {
        var env = ProcessInfo.processInfo.environment
        env["PATH"] = CLI.binary.deletingLastPathComponent().path + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        env["COHORT_WORKSPACE"] = nil
        if let logFile {
            guard FileManager.default.createFile(atPath: logFile.path, contents: nil, attributes: [.posixPermissions: 0o644]) else {
                throw CocoaError(.fileWriteUnknown)
            }
        }
        let outcome = try ChildProcess.run(
            "/bin/bash", ["-euo", "pipefail", "-x", "-c", script], environment: env, directory: directory.path, outputFile: logFile?.path)
        let stdout = try logFile.map { try Data(contentsOf: $0) } ?? Data(outcome.stdout)
        return CLI.Result(status: outcome.status, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: outcome.stderr, as: UTF8.self))
    }

    @Test func theWalkthroughRunsAsWritten() throws {
        let blocks = Self.walkthroughBlocks(try Self.readme)
        #expect(blocks.count >= 2, "the walkthrough has its sample-files block and its commands")
        let script = blocks.joined(separator: "\n")
        for command in ["cohort init", "cohort participant import", "cohort consent record", "cohort data import", "cohort withdraw", "cohort export", "cohort verify", "cohort audit verify"] {
            #expect(script.contains(command), "the walkthrough shows \(command)")
        }
        // Consent is recorded before the first data import (the order a coordinator must follow).
        let consent = try #require(script.range(of: "cohort consent record"))
        let data = try #require(script.range(of: "cohort data import"))
        #expect(consent.lowerBound < data.lowerBound)

        let cli = try CLI()
        defer { cli.cleanup() }
        // As a coordinator runs it under `bash -e` with the output to a log file others may read.
        let r = try Self.bash(script, in: cli.directory, logFile: cli.directory.appendingPathComponent("walkthrough.log"))
        let lastCommand = r.stderr.split(separator: "\n").last { $0.hasPrefix("+ cohort") } ?? ""
        try #require(r.status == 0, "the walkthrough stopped (exit \(r.status)) at: \(lastCommand)\n\(r.stderr.suffix(2000))")

        // What the steps promise, checked on the files they left.
        let tokens = cli.path("tokens.csv")
        #expect(((try FileManager.default.attributesOfItem(atPath: tokens)[.posixPermissions]) as? NSNumber)?.intValue == 0o600)
        #expect(try String(contentsOfFile: tokens, encoding: .utf8).split(separator: "\r\n").count == 5, "header + 4 tokens")
        #expect(r.stdout.contains("symptoms.csv: 25 rows, 25 new") && r.stdout.contains("wearable.ndjson: 50 rows, 50 new"), "\(r.stdout)")
        #expect(!r.stdout.contains("withdrawal token"), "no token in the log others may read")
        // The sample wearable data meets the protocol's daily-wear rule (resting heart rate), so its compliance is not 0%.
        let wear = r.stdout.split(whereSeparator: \.isNewline).filter { $0.contains("daily-wear") && !$0.contains("daily-wear,0,") }
        #expect(!wear.isEmpty, "\(r.stdout)")
        #expect(r.stdout.contains("more.csv: 2 rows, 1 new, 0 already stored, 1 rejected"))
        let rejects = try String(contentsOfFile: cli.path("rejects.csv"), encoding: .utf8)
        #expect(rejects.hasPrefix("line,field,reason,") && rejects.split(whereSeparator: \.isNewline).count == 2, "\(rejects)")
        // 5b: the three outside sources.
        #expect(r.stdout.contains("HKQuantityTypeIdentifierStepCount") && !r.output.contains("Mia's"), "\(r.stdout)")
        #expect(r.stdout.contains("(fhir): 4 resources seen, 2 records imported (2 new") && r.stdout.contains("refused: 1 out of range for heart_rate"))
        // The FHIR summary (its lines up to the next command's output) names no value and no MRN.
        let fhirSummary = (r.stdout.components(separatedBy: "(fhir):").dropFirst().first ?? "").split(separator: "\n").prefix(4).joined(separator: "\n")
        #expect(!fhirSummary.isEmpty && !fhirSummary.contains("412") && !fhirSummary.contains("MRN"), "\(fhirSummary)")
        let hospitalRejects = try String(contentsOfFile: cli.path("hospital-rejects.csv"), encoding: .utf8)
        #expect(hospitalRejects.split(separator: "\r\n").count == 2 && hospitalRejects.contains(",412,"), "\(hospitalRejects)")
        #expect(r.stdout.contains("(health-metrics-csv): 1 rows seen, 2 records imported (2 new"), "\(r.stdout)")
        #expect(r.stdout.contains("imported per metric: heart_rate_resting 1, steps 1") && r.stdout.contains("left out: calories_burned"))
        #expect(r.stdout.contains("✔ receipt ") && r.stdout.contains("P-0005 withdrew (stop)"))
        let archives = try FileManager.default.contentsOfDirectory(atPath: cli.path("exports")).filter { $0.hasSuffix(".tar.gz") }
        #expect(archives.count == 1)
        #expect(r.stdout.contains("1 withdrawn (erase)"), "the erased participant is left out of the export")
        #expect(r.stdout.contains("✔ audit chain intact"))
        #expect(r.stdout.contains("✔ no identifiers found in"))
    }

    /// The demo summary block of the README: `…` stands for what varies (paths, times, counts the
    /// README does not promise); every other character must be what `cohort demo` prints.
    @Test func theReadmeDemoFiguresAreWhatTheDemoPrints() throws {
        let text = try Self.readme
        let start = try #require(text.range(of: "```\ncohort demo — "))
        let body = text[text.index(start.lowerBound, offsetBy: 4)...]
        let block = body[..<(body.range(of: "\n```")?.lowerBound ?? body.endIndex)]
        let expected = block.split(separator: "\n").map(String.init).filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        #expect(expected.contains { $0.contains("compliance       daily-symptom-log: mean") } && expected.contains { $0.contains("k = …") })

        let cli = try CLI()
        defer { cli.cleanup() }
        let demo = try cli.run(["demo"], in: cli.directory)
        try #require(demo.status == 0, "\(demo.output)")
        let printed = demo.stdout.split(separator: "\n").map { String($0).replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression) }
        for line in expected {
            let pattern = "^" + line.components(separatedBy: "…").map(NSRegularExpression.escapedPattern(for:)).joined(separator: ".*") + "$"
            let regex = try NSRegularExpression(pattern: pattern)
            let found = printed.contains { regex.firstMatch(in: $0, range: NSRange($0.startIndex..., in: $0)) != nil }
            #expect(found, "README line not printed by `cohort demo`: \(line)")
        }
    }
}
