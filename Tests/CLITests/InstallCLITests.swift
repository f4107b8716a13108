import CohortTestSupport
import Foundation
import Testing

/// `scripts/install.sh` installs the binary, bash/zsh/fish completions and a man page under PREFIX.
/// The test installs the binary this test run built (COHORT_BIN), so it needs no release build.
@Suite(.serialized) struct InstallCLITests {
    static let groff = "/usr/bin/groff"
    static var inCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// Installs into a fresh temporary PREFIX; returns it.
    static func install(_ cli: CLI) throws -> URL {
        let prefix = cli.directory.appendingPathComponent("prefix with space", isDirectory: true)
        var env = ProcessInfo.processInfo.environment
        env["PREFIX"] = prefix.path
        env["COHORT_BIN"] = CLI.binary.path
        let outcome = try ChildProcess.run("/bin/bash", [CLI.repoRoot.appendingPathComponent("scripts/install.sh").path], environment: env, mergingErrors: true)
        let output = String(decoding: outcome.stdout, as: UTF8.self)
        try #require(outcome.status == 0, "install.sh failed: \(output)")
        #expect(output.contains("Installed cohort"))
        return prefix
    }

    @Test func installsABinaryThatRunsFromThePrefixAndTheCompletions() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let prefix = try Self.install(cli)
        let binary = prefix.appendingPathComponent("bin/cohort")
        #expect(FileManager.default.isExecutableFile(atPath: binary.path))
        let elsewhere = cli.directory.appendingPathComponent("elsewhere", isDirectory: true)
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let version = try cli.run(["--version"], in: elsewhere, binary: binary)
        #expect(version.status == 0 && !version.stdout.isEmpty)
        let initialized = try cli.run(["init", "-w", "ws", "--protocol", "protocols/minimal.yaml"], in: elsewhere, binary: binary)
        #expect(initialized.status != 0, "no protocols/ here yet")
        #expect(try cli.run(["protocol", "examples", "--out", "."], in: elsewhere, binary: binary).status == 0)
        let again = try cli.run(["init", "-w", "ws", "--protocol", "protocols/minimal.yaml"], in: elsewhere, binary: binary)
        #expect(again.status == 0, "the installed binary works on its own: \(again.output)")

        let completions = [
            ("share/bash-completion/completions/cohort", "/bin/bash"),
            ("share/zsh/site-functions/_cohort", "/usr/bin/zsh"),
            ("share/fish/vendor_completions.d/cohort.fish", "/usr/bin/fish"),
        ]
        for (path, shell) in completions {
            let text = try String(contentsOf: prefix.appendingPathComponent(path), encoding: .utf8)
            // Every command of the tree is completed, including nested ones and the new flag names.
            for word in ["export", "verify", "participant", "consent-version", "workspace", "outputs"] {
                #expect(text.contains(word), "\(path) completes \(word)")
            }
            if FileManager.default.isExecutableFile(atPath: shell) {
                let (status, output) = try CLI.tool(shell, ["-n", prefix.appendingPathComponent(path).path])
                #expect(status == 0, "\(shell) -n \(path): \(output)")
            } else {
                print("InstallCLITests: \(shell) not installed; \(path) checked for content only, not parsed")
            }
        }
    }

    @Test func theManPageHasEveryCommandAndRenders() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let prefix = try Self.install(cli)
        let page = prefix.appendingPathComponent("share/man/man1/cohort.1")
        let roff = try String(contentsOf: page, encoding: .utf8)
        #expect(roff.hasPrefix(".TH \"COHORT\" \"1\""))
        for section in [".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH COMMANDS", ".SH EXIT STATUS"] {
            #expect(roff.contains("\n" + section + "\n"), "\(section)")
        }
        for command in ["cohort export", "cohort verify", "cohort participant import", "cohort consent record", "cohort audit show", "cohort deid risk"] {
            #expect(roff.contains("\n.SS " + command.replacingOccurrences(of: "-", with: "\\-") + "\n"), "a section for \(command)")
        }
        #expect(roff.contains("\\fB\\-\\-consent\\-version\\fR"))
        #expect(!roff.contains("\\-\\-dir"), "hidden deprecated names stay out of the page")
        // No line may start a roff request by accident (a text line beginning with . or ').
        let requests = Set([".TH", ".SH", ".SS", ".PP", ".TP", ".B", ".nf", ".fi", ".RS", ".RE"])
        for line in roff.split(separator: "\n") where line.hasPrefix(".") {
            #expect(requests.contains(String(line.split(separator: " ").first ?? "")), "unexpected request: \(line)")
        }
        guard FileManager.default.isExecutableFile(atPath: Self.groff) else {
            #expect(!Self.inCI, "groff is missing in CI: .ci/run installs groff-base")
            print("InstallCLITests: groff not installed; the man page's roff structure was checked, not its rendering")
            return
        }
        let (status, text) = try CLI.tool(Self.groff, ["-man", "-Tutf8", "-ww", "-z", page.path])
        #expect(status == 0 && text.isEmpty, "groff warns about nothing: \(text)")
        let (_, rendered) = try CLI.tool(Self.groff, ["-man", "-Tascii", "-P-c", "-P-b", "-P-u", page.path])
        #expect(rendered.contains("cohort export") && rendered.contains("--consent-version") && rendered.contains("EXIT STATUS"), "\(rendered.prefix(400))")
    }
}
