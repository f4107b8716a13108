import Foundation
import Testing

/// What a new coordinator trips over first: typos named with the closest real name, help that
/// reads at 80 columns, hints with today's flags, a demo that does not replace the previous one
/// unasked, units that fit their kind, and the identifiers a coordinator needs to see.
@Suite(.serialized)
struct NewcomerCLITests {
    @Test func aMistypedOptionIsNamedWithTheClosestRealOne() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let typo = try cli.run(["export", "--recipent", "X"])
        #expect(typo.status == 2)
        #expect(typo.stderr.hasPrefix("error: unknown option '--recipent' for 'cohort export'; did you mean '--recipient'?"), "\(typo.stderr)")
        let subcommand = try cli.run(["participant", "enrol", "--code", "P-0001"])
        #expect(subcommand.status == 2)
        #expect(subcommand.stderr.hasPrefix("error: 'enrol' is not a subcommand of 'cohort participant'; did you mean 'enroll'?"), "\(subcommand.stderr)")
        let top = try cli.run(["exprt"])
        #expect(top.status == 2 && top.stderr.contains("did you mean 'export'?"), "\(top.stderr)")
        // A real option that is missing keeps the parser's message, without a doubled "error".
        let missing = try cli.run(["deliver", "x.manifest.json"])
        #expect(missing.status == 2 && missing.stderr.hasPrefix("error: Missing expected argument '--to"), "\(missing.stderr)")
        #expect(!missing.stderr.contains("Error:"))
        // An export names who it is for, by --recipient or by the certificate it is encrypted to.
        let recipient = try cli.run(["export"])
        #expect(recipient.status == 2 && recipient.stderr.hasPrefix("error: give --recipient NAME (or --encrypt-to CERT.pem"), "\(recipient.stderr)")
        // An old (hidden) name is still known: not reported as unknown.
        let old = try cli.run(["export", "--recipient", "x", "--formats", "csv", "-w", cli.path("none")])
        #expect(!old.stderr.contains("unknown option"), "\(old.stderr)")
    }

    /// Every command's help, at 80 columns (a pipe or a log file), shows its examples whole: no
    /// example line is wrapped into the next line's start, and no help offers a value the command refuses.
    @Test func helpExamplesFitEightyColumns() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        func subcommands(_ help: String) -> [String] {
            guard let start = help.range(of: "SUBCOMMANDS:") else { return [] }
            return help[start.upperBound...].split(separator: "\n").compactMap { line in
                guard line.hasPrefix("  "), !line.hasPrefix("   "), let word = line.split(separator: " ").first else { return nil }
                return String(word)
            }
        }
        var commands: [[String]] = [[]]
        for top in subcommands(try cli.run(["--help"]).stdout) where top != "help" {
            let subs = subcommands(try cli.run([top, "--help"]).stdout).filter { $0 != "help" }
            commands += subs.isEmpty ? [[top]] : subs.map { [top, $0] }
        }
        #expect(commands.count > 25, "\(commands)")
        var checked = 0
        for command in commands {
            let help = try cli.run(command + ["--help"]).stdout
            var inExamples = false
            for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasSuffix("Examples:") || line.hasSuffix("Example:") {
                    inExamples = true
                    continue
                }
                if line.hasPrefix("USAGE:") || line.hasPrefix("OPTIONS:") || line.hasPrefix("ARGUMENTS:") || line.hasPrefix("SUBCOMMANDS:") { inExamples = false }
                guard inExamples, !line.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
                checked += 1
                #expect(line.hasPrefix("  "), "cohort \(command.joined(separator: " ")) --help wraps an example: \(line)")
            }
            if help.contains("has no CSV output") || ["verify", "export", "keys show", "audit verify", "data import", "protocol validate"].contains(command.joined(separator: " ")) {
                #expect(!help.contains("values: table, json, csv"), "cohort \(command.joined(separator: " ")) offers csv it refuses")
            }
        }
        #expect(checked > 40)
    }

    @Test func hintsNameTodaysFlags() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let r = try cli.run(["participant", "list", "-w", cli.path("nowhere")])
        #expect(r.status == 4 && r.stderr.contains("cohort init -w ") && !r.stderr.contains("--dir"), "\(r.stderr)")
    }

    @Test func aSecondDemoDoesNotReplaceTheFirstUnasked() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let args = ["demo", "-w", cli.workspace, "--participants", "6", "--seed", "1"]
        #expect(try cli.run(args).status == 0)
        let exports = URL(fileURLWithPath: cli.workspace).appendingPathComponent("exports")
        let first = try FileManager.default.contentsOfDirectory(atPath: exports.path).sorted()
        #expect(!first.isEmpty)
        let again = try cli.run(args)
        #expect(again.status == 1 && again.stderr.contains("--yes"), "\(again.output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: exports.path).sorted() == first, "the first demo's export is still there")
        let replaced = try cli.run(args + ["--yes"])
        #expect(replaced.status == 0, "\(replaced.output)")
    }

    @Test func aHeartRateInBreathsPerMinuteIsRefused() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        try cli.enrollTwo()
        let file = try cli.write("hr.csv", "participant,kind,start,value,unit\nP-0001,heart_rate,\(CLI.day(-1))T08:00:00,60,{breaths}/min\n")
        let r = try cli.ws("data", "import", file)
        #expect(r.status == 3 && r.stderr.contains("unit"), "\(r.output)")
        let ok = try cli.write("hr2.csv", "participant,kind,start,value,unit\nP-0001,heart_rate,\(CLI.day(-1))T08:00:00,60,{beats}/min\n")
        #expect(try cli.ws("data", "import", ok).status == 0)
    }

    @Test func theCoordinatorsViewShowsAddressAndDevices() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        let enrolled = try cli.ws(
            "participant", "enroll", "--code", "P-0009", "--name", "Quill Marrow", "--address", "12 Harbor Drive", "--device", "Watch A",
            "--device", "Ring B", "--time-zone", "Europe/Berlin", "--tokens", cli.path("t.csv"))
        #expect(enrolled.status == 0, "\(enrolled.output)")
        let list = try cli.ws("participant", "list", "--show-identifiers", "--format", "csv")
        let lines = list.stdout.components(separatedBy: "\r\n")
        #expect(lines.first?.contains(",address,zip,mrn,devices") == true, "\(lines.first ?? "")")
        #expect(lines.contains { $0.hasPrefix("P-0009,") && $0.contains("12 Harbor Drive") && $0.contains("Watch A; Ring B") }, "\(list.stdout)")
        let plain = try cli.ws("participant", "list", "--format", "csv")
        #expect(!plain.stdout.contains("Harbor"), "identifiers only with --show-identifiers")
    }

    /// Every problem of every line in one run: a coordinator fixes the whole file in one pass.
    @Test func everyRosterProblemIsListedAtOnce() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        let roster = try cli.write(
            "bad.csv",
            CLI.rosterHeader + "P-0101,Ann Quill,not-an-email,,1980-13-45,X,,02139,,Mars/Base,\(CLI.day(-3)),\n"
                + "P-0102,Bo Quill,,,1980-01-01,female,,02139,,Europe/Paris,\(CLI.day(-3)),\n")
        let r = try cli.ws("participant", "import", roster, "--tokens", cli.path("t.csv"))
        #expect(r.status == 3, "\(r.output)")
        for field in ["time_zone", "birth_date", "sex", "email"] {
            #expect(r.stderr.contains("bad.csv:2: \(field):"), "\(field) is listed: \(r.stderr)")
        }
        #expect(r.stderr.contains("4 problems in the roster") && !r.stderr.contains("not-an-email") && !r.stderr.contains("Mars"), "\(r.stderr)")
    }
}
