import CohortTestSupport
import Foundation
import Testing

/// One flag vocabulary across commands (docs/cli.md): -w everywhere, --format table|json|csv
/// honoured or refused with exit 2, --outputs for the export's files, --consent-version,
/// audit show --since DATE / --since-event N, tokens never in a file others can read,
/// quoted paths in printed commands, one clear line for a missing archive.
@Suite(.serialized) struct FlagVocabularyCLITests {
    /// Runs the binary with extra environment and, optionally, stdout sent to a file.
    static func run(_ args: [String], environment extra: [String: String] = [:], stdoutFile: URL? = nil) throws -> CLI.Result {
        var env = ProcessInfo.processInfo.environment
        env["COHORT_WORKSPACE"] = nil
        for (key, value) in extra { env[key] = value }
        let outcome = try ChildProcess.run(CLI.binary.path, args, environment: env, directory: CLI.repoRoot.path, outputFile: stdoutFile?.path)
        return CLI.Result(status: outcome.status, stdout: String(decoding: outcome.stdout, as: UTF8.self), stderr: String(decoding: outcome.stderr, as: UTF8.self))
    }

    static func mode(_ path: String) throws -> Int {
        ((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? NSNumber)?.intValue ?? -1
    }

    @Test func workspaceIsDashWEverywhereAndTheOldDirStillWorks() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let created = try cli.run(["init", "-w", cli.workspace, "--protocol", "protocols/minimal.yaml"])
        #expect(created.status == 0, "\(created.output)")
        #expect(FileManager.default.fileExists(atPath: cli.workspace + "/" + CLI.storeFile))
        let shown = try cli.ws("keys", "show", "--format", "json")
        #expect(shown.status == 0 && shown.stdout.contains("\"signing\""), "\(shown.output)")
        let keys = try cli.run(["keys", "init", "--keystore", cli.path("k")])
        #expect(keys.status == 0 && FileManager.default.fileExists(atPath: cli.path("k") + "/signing.pem"), "\(keys.output)")
        let old = try cli.run(["init", "--dir", cli.path("old")])
        #expect(old.status == 0 && old.stderr.contains("-w/--workspace"), "the deprecated --dir still works and says its new name: \(old.output)")
        let both = try cli.run(["init", "-w", cli.path("a"), "--dir", cli.path("b")])
        #expect(both.status == 2, "\(both.output)")
        let help = try cli.run(["init", "--help"])
        #expect(help.stdout.contains("--workspace") && !help.stdout.contains("--dir"), "--dir is hidden: \(help.stdout)")
    }

    @Test func csvIsHonouredOrRefusedWithExit2() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        try cli.enrollTwo()
        for args in [["keys", "show"], ["audit", "verify"], ["data", "import", "x.csv"], ["export", "--recipient", "r"]] {
            let r = try cli.run(args + ["--format", "csv", "-w", cli.workspace])
            #expect(r.status == 2 && r.stderr.contains("no CSV output"), "cohort \(args.joined(separator: " ")) --format csv → \(r.status): \(r.output)")
        }
        for args in [["verify", "a.tar.gz", "--public-key", "k.pem"], ["protocol", "validate", "protocols/minimal.yaml"]] {
            let r = try cli.run(args + ["--format", "csv"])
            #expect(r.status == 2 && r.stderr.contains("no CSV output"), "cohort \(args.joined(separator: " ")) --format csv → \(r.status): \(r.output)")
        }
        for args in [["participant", "list"], ["consent", "status"], ["audit", "show"], ["compliance"]] {
            let r = try cli.run(args + ["--format", "csv", "-w", cli.workspace])
            #expect(r.status == 0, "\(r.output)")
            let header = r.stdout.split(separator: "\r\n").first.map(String.init) ?? ""
            #expect(header.contains(",") && !header.contains("│") && !header.contains("  "), "cohort \(args.joined(separator: " ")) prints CSV: \(header)")
        }
    }

    @Test func consentVersionAndExportOutputsHaveTheirNewNames() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        let roster = try cli.write("roster.csv", CLI.rosterHeader + "P-0001,Ann Example,,,1980-01-01,female,,02139,,UTC,\(CLI.day(-20)),\n")
        #expect(try cli.run(["participant", "import", roster, "-w", cli.workspace]).status == 0)
        let recorded = try cli.ws("consent", "record", "--sharing", "broad", "--participant", "P-0001", "--consent-version", "1.0", "--signed-at", "\(CLI.day(-20))T12:00:00Z")
        #expect(recorded.status == 0 && recorded.stdout.contains("Recorded consent 1.0"), "\(recorded.output)")
        let rendered = try cli.ws("consent", "render", "--consent-version", "1.0")
        #expect(rendered.status == 0 && !rendered.stdout.isEmpty)
        let missing = try cli.ws("consent", "record", "--sharing", "broad", "--participant", "P-0001")
        #expect(missing.status == 2 && missing.stderr.contains("--consent-version"), "\(missing.output)")
        let help = try cli.run(["consent", "record", "--sharing", "broad", "--help"])
        #expect(help.stdout.contains("--consent-version") && !help.stdout.contains("--version <"), "\(help.stdout)")

        let export = try cli.ws("export", "--recipient", "lab", "--outputs", "csv", "--no-archive", "--out", cli.path("out"))
        #expect(export.status == 0, "\(export.output)")
        let data = try FileManager.default.contentsOfDirectory(atPath: cli.path("out")).first.map { cli.path("out") + "/" + $0 + "/data" } ?? ""
        let written = Set(try FileManager.default.contentsOfDirectory(atPath: data))
        #expect(written.contains("csv") && !written.contains("fhir") && !written.contains("json"), "--outputs csv writes CSV only: \(written)")
        let bad = try cli.ws("export", "--recipient", "lab", "--outputs", "csv,xml")
        #expect(bad.status == 2, "\(bad.output)")
    }

    @Test func auditShowSinceTakesADateAndSinceEventANumber() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        let all = try cli.ws("audit", "show", "--format", "json")
        let events = try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(events.count >= 2)
        let fromTwo = try cli.ws("audit", "show", "--since-event", "2", "--format", "json")
        let two = try JSONSerialization.jsonObject(with: Data(fromTwo.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(two.count == events.count - 1 && (two.first?["seq"] as? Int) == 2)
        let today = try cli.ws("audit", "show", "--since", CLI.day(0), "--format", "json")
        #expect((try JSONSerialization.jsonObject(with: Data(today.stdout.utf8)) as? [[String: Any]])?.count == events.count, "\(today.output)")
        let tomorrow = try cli.ws("audit", "show", "--since", CLI.day(1), "--format", "json")
        #expect((try JSONSerialization.jsonObject(with: Data(tomorrow.stdout.utf8)) as? [[String: Any]])?.isEmpty == true, "\(tomorrow.output)")
        #expect(try cli.ws("audit", "show", "--since", "10").status == 2, "a number is not a date: use --since-event")
        #expect(try cli.ws("audit", "show", "--since", CLI.day(0), "--since-event", "2").status == 2)
    }

    @Test func tokensGoToAPrivateFileAndNeverToAFileOthersCanRead() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        let roster = try cli.write("roster.csv", CLI.rosterHeader + "P-0001,Ann Example,,,1980-01-01,female,,02139,,UTC,\(CLI.day(-20)),\n")
        // `> tokens.csv` from a shell with umask 022: a 0644 file.
        let shared = cli.directory.appendingPathComponent("shared.csv")
        #expect(FileManager.default.createFile(atPath: shared.path, contents: nil, attributes: [.posixPermissions: 0o644]))
        let refused = try Self.run(["participant", "import", roster, "--format", "csv", "-w", cli.workspace], stdoutFile: shared)
        #expect(refused.status == 6 && refused.stderr.contains("--tokens"), "\(refused.output)")
        #expect(try Data(contentsOf: shared).isEmpty)
        #expect(!(try cli.ws("participant", "list", "--format", "csv").stdout.contains("P-0001")), "nothing was enrolled")

        let tokens = cli.path("tokens.csv")
        let written = try cli.run(["participant", "import", roster, "--tokens", tokens, "-w", cli.workspace])
        #expect(written.status == 0, "\(written.output)")
        #expect(try Self.mode(tokens) == 0o600)
        let text = try String(contentsOfFile: tokens, encoding: .utf8)
        #expect(text.hasPrefix("code,withdrawal_token\r\nP-0001,") && !written.stdout.contains("P-0001,"), "tokens are in the file, not on stdout")
        let again = try cli.run(["participant", "enroll", "--code", "P-0002", "--name", "B", "--time-zone", "UTC", "--tokens", tokens, "-w", cli.workspace])
        #expect(again.status == 5, "an existing tokens file is never overwritten: \(again.output)")

        // A private file (the user's own redirect with umask 077) is accepted.
        let own = cli.directory.appendingPathComponent("own.csv")
        #expect(FileManager.default.createFile(atPath: own.path, contents: nil, attributes: [.posixPermissions: 0o600]))
        let accepted = try Self.run(
            ["participant", "enroll", "--code", "P-0003", "--name", "C", "--time-zone", "UTC", "--format", "csv", "-w", cli.workspace], stdoutFile: own)
        let ownText = try String(contentsOf: own, encoding: .utf8)
        #expect(accepted.status == 0 && ownText.contains("P-0003,"), "\(accepted.output)")
    }

    @Test func verifyOfAMissingArchiveIsOneLineAndExit4() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let r = try cli.run(["verify", cli.path("nope.tar.gz"), "--public-key", cli.path("key.pem")])
        #expect(r.status == 4, "\(r.output)")
        // One error line (and its hint), no list of failed checks.
        #expect(r.stdout.isEmpty && r.stderr.hasPrefix("error: ") && r.stderr.contains("nope.tar.gz: no such archive") && !r.output.contains("✘"), "\(r.output)")
        #expect(r.stderr.split(separator: "\n").count <= 2, "\(r.output)")
        #expect(try cli.run(["verify", cli.path("nope.tar.gz")]).status == 2, "no key and no workspace is a usage error")
    }

    @Test func printedCommandsQuoteTheirPaths() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let workspace = cli.path("my study's data")
        let demo = try cli.run(["demo", "-w", workspace, "--participants", "4", "--seed", "3"])
        #expect(demo.status == 0, "\(demo.output)")
        let line = try #require(demo.stdout.split(separator: "\n").first { $0.contains("cohort verify ") })
        #expect(line.contains("'\(cli.directory.path)/my study'\\''s data/signing.pub.pem'"), "\(line)")
        // The printed command runs as printed.
        let (status, output) = try CLI.tool("/bin/sh", ["-c", "cd \(CLI.repoRoot.path) && " + line.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "cohort verify", with: "'\(CLI.binary.path)' verify")])
        #expect(status == 0, "\(output)")
        let export = try cli.run(["export", "--recipient", "r", "--out", cli.path("out dir"), "-w", workspace])
        let verify = try #require(export.stdout.split(separator: "\n").first { $0.hasPrefix("Verify: ") })
        #expect(verify.contains("'\(cli.path("out dir"))/") && verify.contains("-w '\(workspace.replacingOccurrences(of: "'", with: "'\\''"))'"), "\(verify)")
    }

    @Test func helpIsWrappedOnceAndExamplesStayWhole() throws {
        // On a wide terminal every sentence is on one line: the source holds no hard-wrapped prose.
        let export = try Self.run(["export", "--help"], environment: ["COLUMNS": "400"])
        #expect(export.stdout.contains("Names are unique in --out (a taken one gets -2, -3…); with --created-at the name is fixed and a taken one is refused."))
        // An example longer than 80 columns continues with a backslash, so it reads whole at any width.
        #expect(export.stdout.contains("cohort export --recipient lab-b --outputs csv,fhir --no-archive \\\n    --out exports -w my-study\n"))
        let risk = try Self.run(["deid", "risk", "--help"], environment: ["COLUMNS": "400"])
        #expect(risk.stdout.contains("Equivalence classes are formed over the quasi-identifier columns the export's de-identification report names"))
        // On a narrow one ArgumentParser wraps it, once.
        let narrow = try Self.run(["export", "--help"], environment: ["COLUMNS": "60"])
        // Lines longer than 60 are the usage line, whole examples, or one word that cannot be broken.
        #expect(narrow.stdout.split(separator: "\n").allSatisfy { $0.count <= 60 || $0.contains("cohort export") || !$0.trimmingCharacters(in: .whitespaces).contains(" ") })
    }

    @Test func nothingButResultsReachesAPipe() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        try cli.enrollTwo()
        let data = try cli.write("d.csv", "participant,kind,start,value\nP-0001,pain,\(CLI.day(-3))T09:00:00Z,3\n")
        let imported = try cli.ws("data", "import", data)
        #expect(imported.status == 0 && imported.stderr.isEmpty, "no progress on a pipe: \(imported.stderr)")
        let exported = try cli.ws("export", "--recipient", "r", "--out", cli.path("out"))
        #expect(exported.status == 0 && !exported.stderr.contains("\r") && !exported.stderr.contains("exporting"), "\(exported.stderr)")
        let quiet = try cli.ws("participant", "import", cli.write("r2.csv", CLI.rosterHeader + "P-0009,Q Q,,,,,,,,UTC,\(CLI.day(-5)),\n"), "--quiet")
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "--quiet drops the note: \(quiet.stderr)")
    }

    @Test func complianceAsOfShowsTheStatusOfThatDay() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        try cli.enrollTwo()
        let withdrawn = try cli.ws("withdraw", "--participant", "P-0001", "--staff", "--reason", "test", "--mode", "stop")
        #expect(withdrawn.status == 0, "\(withdrawn.output)")
        func status(_ args: String...) throws -> String? {
            let r = try cli.run(["compliance", "--format", "csv", "-w", cli.workspace] + args)
            #expect(r.status == 0, "\(r.output)")
            return r.stdout.split(separator: "\r\n").first { $0.hasPrefix("P-0001,") }?.split(separator: ",").dropFirst(2).first.map(String.init)
        }
        #expect(try status() == "stopped")
        #expect(try status("--as-of", CLI.day(-1)) == "active", "the withdrawal happened after that day")
    }
}
