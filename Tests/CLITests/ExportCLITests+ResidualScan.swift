import Foundation
import Testing

/// End to end: the residual scan is precise (surnames that are ordinary words pass), complete
/// (a planted full name is refused), and reviewed exceptions (`--allow`) are audited, signed into
/// the manifest and printed by `cohort verify`.
extension ExportCLITests {
    /// Initializes `cli`'s workspace with the example protocol changed to keep notes verbatim
    /// (`records.note: keep`) and to ask no k-anonymity.
    func keepNotesWorkspace(_ cli: CLI) throws {
        let fm = FileManager.default
        let protocols = cli.directory.appendingPathComponent("protocols")
        try fm.createDirectory(at: protocols, withIntermediateDirectories: true)
        try fm.createSymbolicLink(at: cli.directory.appendingPathComponent("templates"), withDestinationURL: CLI.repoRoot.appendingPathComponent("templates"))
        let original = try text(CLI.repoRoot.appendingPathComponent("protocols/axspa-wearables.yaml").path)
        #expect(original.contains("    records.note: scrub\n") && original.contains("  k_anonymity:\n    k: 3\n"))
        // No embargo (issue 27): these tests publish notes written days before the export.
        #expect(original.contains("    embargo_days: 182\n"))
        var lines = original.replacingOccurrences(of: "    records.note: scrub\n", with: "    records.note: keep\n")
            .replacingOccurrences(of: "    embargo_days: 182\n", with: "    embargo_days: 0\n").components(separatedBy: "\n")
        if let k = lines.firstIndex(of: "  k_anonymity:") { lines.removeSubrange(k...(k + 2)) }
        let protocolFile = protocols.appendingPathComponent("keep-notes.yaml")
        try Data(lines.joined(separator: "\n").utf8).write(to: protocolFile)
        let initialized = try cli.run(["init", "--dir", cli.workspace, "--protocol", protocolFile.path])
        try #require(initialized.status == 0, "\(initialized.output)")
    }

    @Test func vocabularySurnamesExportAndAPlantedFullNameNeedsAReviewedException() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        try keepNotesWorkspace(cli)
        let names = ["Hope Field", "Will Bath", "Grace Hand", "Mark Sample", "Faith Long", "Joy Little"]
        var roster = CLI.rosterHeader
        for (i, name) in names.enumerated() {
            roster += "P-010\(i),\(name),p\(i)@example.net,+44 20 7946 010\(i),197\(i)-0\(i + 1)-1\(i),female,\(i + 10) Quarry Road,02139,MRN770000\(i),Europe/London,\(CLI.day(-10)),\n"
        }
        let enrolled = try cli.ws("participant", "import", try cli.write("roster.csv", roster))
        try #require(enrolled.status == 0, "\(enrolled.output)")
        for i in names.indices {
            let consent = try cli.ws("consent", "record", "--sharing", "broad", "--participant", "P-010\(i)", "--version", "1.1", "--signed-at", "\(CLI.day(-10))T12:00:00Z")
            #expect(consent.status == 0, "\(consent.output)")
        }
        // Clean notes full of the surnames as ordinary words (and cohort's own codebook, README and
        // datapackage.json say "field" and "sample" throughout).
        let clean = ["long walk in the field", "took a warm bath", "left hand swollen", "blood sample taken", "little sleep, hope it passes", "Field trip, Long day"]
        var records = "participant,kind,start,value,note\n"
        for (i, note) in clean.enumerated() { records += "P-010\(i),pain,\(CLI.day(-3))T12:00:00Z,3,\"\(note)\"\n" }
        #expect(try cli.ws("data", "import", try cli.write("clean.csv", records)).status == 0)
        let first = try exported(cli, out: "out1")
        #expect(try text(first.manifest).contains("residual_exceptions") == false, "no exception, no manifest field")

        // A planted full name of a vocabulary-named participant in a kept note is refused.
        let note = "Hope Field came by"
        #expect(try cli.ws("data", "import", try cli.write("planted.csv", "participant,kind,start,value,note\nP-0101,pain,\(CLI.day(-2))T12:00:00Z,5,\(note)\n")).status == 0)
        let (refused, none) = try export(cli, out: "out2")
        #expect(refused.status == 8 && none == nil, "\(refused.output)")
        #expect(refused.stderr.contains("symptom_logs.csv:") && refused.stderr.contains(": note: name"), "\(refused.stderr)")
        #expect(refused.stderr.contains("records.note is keep: use scrub or drop"), "\(refused.stderr)")
        #expect(!refused.output.contains("Hope Field") && !refused.output.contains("Field came"), "\(refused.output)")

        // The findings list carries the SHA-256 of the exact value (checked with sha256sum).
        let findingsName = try #require((try FileManager.default.contentsOfDirectory(atPath: cli.path("out2"))).first { $0.hasSuffix(".residual-findings.csv") })
        let findings = try text(cli.path("out2/" + findingsName))
        let (_, digest) = try CLI.tool("/usr/bin/sha256sum", [try cli.write("value.txt", note)])
        let valueHash = String(digest.prefix(64))
        let rows = findings.components(separatedBy: "\r\n").dropFirst().filter { !$0.isEmpty }
        #expect(!rows.isEmpty && rows.allSatisfy { $0.contains(valueHash) }, "\(findings)")
        #expect(Set(rows.map { $0.split(separator: ",").prefix(2).joined(separator: ".") })
            == ["symptom_logs.note", "Observation.note.text"], "\(findings)")
        #expect(!findings.contains("Hope") && !findings.contains("Field"))

        // An exceptions list without a reviewer is refused with file, line and field.
        let unsigned = try cli.write("unsigned.csv", findings)
        let (bad, _) = try export(cli, out: "out3", ["--allow", unsigned])
        #expect(bad.status != 0 && bad.stderr.contains("unsigned.csv") && bad.stderr.contains("reviewer"), "\(bad.output)")

        // Reviewed: the export succeeds; the exception is audited, signed into the manifest and verified.
        var allow = "table,column,value_sha256,reviewer,reason\n"
        for row in rows {
            let cells = row.split(separator: ",", omittingEmptySubsequences: false)
            allow += "\(cells[0]),\(cells[1]),\(cells[2]),Dr. Ada Reviewer,participant asked to be named (IRB amendment 7)\n"
        }
        let published = try exported(cli, out: "out4", ["--allow", try cli.write("allow.csv", allow)])
        let manifest = try JSONSerialization.jsonObject(with: Data(try text(published.manifest).utf8)) as? [String: Any]
        let exceptions = try #require(manifest?["residual_exceptions"] as? [[String: Any]])
        // symptom_logs.note covers the CSV and the NDJSON value; the FHIR element (Bulk NDJSON only:
        // the default layout writes each resource once) one more.
        #expect(exceptions.count == 2 && exceptions.allSatisfy { $0["value_sha256"] as? String == valueHash && $0["reviewer"] as? String == "Dr. Ada Reviewer" })
        // Each of the three values is a name and, in free text kept as it is, an unknown token
        // ("Hope Field came by": a person): six findings.
        #expect(exceptions.map { $0["findings"] as? Int ?? 0 }.reduce(0, +) == 6, "\(exceptions)")
        #expect(!(try text(published.manifest)).contains("Hope Field"))
        let audit = try cli.ws("audit", "show", "--format", "json")
        #expect(audit.stdout.contains("export.exception") && audit.stdout.contains(valueHash), "\(audit.stdout.suffix(2_000))")
        #expect(!audit.stdout.contains("Hope Field"))
        let verified = try cli.ws("verify", published.archive)
        #expect(verified.status == 0, "\(verified.output)")
        #expect(verified.stdout.contains("reviewed exceptions") && verified.stdout.contains("approved by Dr. Ada Reviewer") && verified.stdout.contains(valueHash), "\(verified.stdout)")
        #expect(verified.stdout.contains("6 finding(s) covered by the manifest's reviewed exceptions"), "\(verified.stdout)")

        // `deid scan --format json` on the published bag lists the same hashes for a reviewer.
        let bag = try extract(published.archive, into: cli.path("x"))
        let scan = try cli.ws("deid", "scan", bag.path, "--format", "json")
        #expect(scan.status == 1, "\(scan.output)")
        let result = try JSONSerialization.jsonObject(with: Data(scan.stdout.utf8)) as? [String: Any]
        let listed = try #require(result?["findings"] as? [[String: Any]])
        #expect(listed.count == 6 && listed.allSatisfy { $0["value_sha256"] as? String == valueHash })
        #expect(Set(listed.compactMap { $0["kind"] as? String }) == ["name", "unknown_token"])
        #expect((result?["files_skipped"] as? [String])?.contains("data/csv/codebook.csv") == true)
        // `--format csv` is an exceptions file to complete: one row per distinct table, column and value.
        let csvScan = try cli.ws("deid", "scan", bag.path, "--format", "csv")
        let csvRows = csvScan.stdout.split(whereSeparator: \.isNewline).map(String.init)
        #expect(csvRows.first == "table,column,value_sha256,reviewer,reason", "\(csvScan.stdout)")
        #expect(csvRows.count == 3 && csvRows.dropFirst().allSatisfy { $0.contains(valueHash) }, "\(csvScan.stdout)")
    }
}
