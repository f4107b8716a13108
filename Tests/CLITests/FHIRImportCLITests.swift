import Foundation
import Testing

/// `cohort data import --from fhir`: the hand-written fixtures end to end, and cohort's own FHIR
/// export re-imported into a fresh workspace with the same records.
@Suite(.serialized)
struct FHIRImportCLITests {
    static let fixtures = CLI.repoRoot.appendingPathComponent("Tests/CohortImportTests/Fixtures")

    /// An axspa-wearables workspace with three participants enrolled on 2026-09-01 (the same
    /// birth year, sex and ZIP3, so an export keeps them all at k = 3), MRNs as in the fixtures.
    /// `statedOnly`: the protocol only states k over what an acquaintance knows — three
    /// participants with different kinds cannot reach k = 3 over them without publishing no
    /// record at all (the round trip below needs every record).
    static func workspace(_ cli: CLI, _ dir: String, statedOnly: Bool = false) throws {
        var protocolPath = "protocols/axspa-wearables.yaml"
        if statedOnly {
            let text = try String(contentsOf: CLI.repoRoot.appendingPathComponent(protocolPath), encoding: .utf8)
            try #require(text.contains("  k_anonymity:\n"))
            try FileManager.default.createDirectory(at: cli.directory.appendingPathComponent("protocols"), withIntermediateDirectories: true)
            if !FileManager.default.fileExists(atPath: cli.directory.appendingPathComponent("templates").path) {
                try FileManager.default.createSymbolicLink(
                    at: cli.directory.appendingPathComponent("templates"), withDestinationURL: CLI.repoRoot.appendingPathComponent("templates"))
            }
            protocolPath = try cli.write(
                "protocols/stated.yaml", text.replacingOccurrences(of: "  k_anonymity:\n", with: "  k_anonymity:\n    record_attributes: state\n"))
        }
        let r = try cli.run(["init", "--dir", dir, "--protocol", protocolPath])
        try #require(r.status == 0, "init failed: \(r.output)")
        let roster = try cli.write(
            "roster.csv",
            CLI.rosterHeader + "P-0001,Ann Example,ann@example.net,,1980-02-01,female,1 Main St,02139,MRN1234567,Europe/Berlin,2026-09-01,\n"
                + "P-0002,Bea Example,bea@example.net,,1980-03-01,female,2 Main St,02140,MRN7654321,America/New_York,2026-09-01,\n"
                + "P-0003,Cat Example,cat@example.net,,1980-04-01,female,3 Main St,02141,MRN5555555,Europe/Berlin,2026-09-01,\n")
        try #require(try cli.run(["participant", "import", roster, "-w", dir]).status == 0)
        for code in ["P-0001", "P-0002", "P-0003"] {
            let c = try cli.run(["consent", "record", "--sharing", "broad", "--participant", code, "--version", "1.1", "--signed-at", "2026-09-01T12:00:00Z", "-w", dir])
            try #require(c.status == 0, "consent failed: \(c.output)")
        }
    }

    /// participant code, kind, start, end, value of every stored record, sorted.
    static func records(_ dir: String) throws -> [String] {
        let (status, out) = try CLI.sql(
            "SELECT p.code, r.kind, r.start_ms, coalesce(CAST(r.end_ms AS text), ''), coalesce(CAST(r.value AS text), '') FROM records r JOIN participants p ON p.pk = r.participant_pk ORDER BY 1, 2, 3",
            workspace: dir)
        #expect(status == 0, "\(out)")
        return CLI.rows(out, realColumn: 4)
    }

    @Test func importsABulkFolderAndBundlesOnceEach() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        try Self.workspace(cli, cli.workspace)
        let bulk = Self.fixtures.appendingPathComponent("fhir/bulk").path
        let first = try cli.ws("data", "import", "--from", "fhir", bulk)
        #expect(first.status == 0, "\(first.output)")
        #expect(first.stdout.contains("9 records imported (9 new, 0 already stored)"), "\(first.stdout)")
        #expect(first.stdout.contains("skipped: 1 not collected: body_mass"))
        #expect(first.stdout.contains("skipped: 1 resource type not imported: Encounter"))
        #expect(first.stdout.contains("patients matched to the roster: 2"))
        // Re-importing stores nothing new; a Bundle is recognized by its content.
        let again = try cli.ws("data", "import", bulk, "--from", "fhir")
        #expect(again.stdout.contains("9 records imported (0 new, 9 already stored)"), "\(again.output)")
        let bundle = try cli.ws("data", "import", Self.fixtures.appendingPathComponent("fhir/bundle-transaction.json").path)
        #expect(bundle.stdout.contains("(fhir): 2 resources seen, 1 records imported (1 new"), "\(bundle.output)")
        #expect(try Self.records(cli.workspace).count == 10)
    }

    @Test func aBadValueNamesTheFHIRPathAndStoresNothing() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        try Self.workspace(cli, cli.workspace)
        let r = try cli.ws("data", "import", "--from", "fhir", Self.fixtures.appendingPathComponent("fhir/errors/out-of-range.ndjson").path)
        #expect(r.status != 0)
        #expect(r.stderr.contains("out-of-range.ndjson:2: Observation.valueQuantity.value: out of range for heart_rate"), "\(r.stderr)")
        #expect(!r.output.contains("420") && !r.output.contains("MRN1234567"))
        #expect(try Self.records(cli.workspace).isEmpty)
        let unmatched = try cli.ws("data", "import", Self.fixtures.appendingPathComponent("fhir/errors/unmatched-patient.ndjson").path)
        #expect(unmatched.status != 0 && unmatched.stderr.contains("Patient.identifier: the Patient matches no participant"), "\(unmatched.stderr)")
    }

    @Test func cohortsOwnFHIRExportReimportsIntoAFreshWorkspace() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let original = cli.path("original"), fresh = cli.path("fresh")
        try Self.workspace(cli, original, statedOnly: true)
        let imported = try cli.run(["data", "import", "--from", "fhir", Self.fixtures.appendingPathComponent("fhir/bulk").path, "-w", original])
        try #require(imported.status == 0, "\(imported.output)")
        // Dated 200 days from now: past the shipped embargo, so every record is exported whatever the participant's shift.
        let export = try cli.run(["export", "--recipient", "lab-b", "--formats", "csv,fhir", "--no-archive", "--out", cli.path("out"), "--created-at", CLI.pastTheEmbargo, "-w", original])
        try #require(export.status == 0, "\(export.output)")
        let observations = try #require(
            FileManager.default.enumerator(atPath: cli.path("out"))?.compactMap { $0 as? String }.first { $0.hasSuffix("fhir/Observation.ndjson") })
        let fhirFolder = URL(fileURLWithPath: cli.path("out")).appendingPathComponent(observations).deletingLastPathComponent().path
        let map = cli.path("lab-b-map.csv")
        let written = try cli.run(["data", "pseudonym-map", "--recipient", "lab-b", "--out", map, "-w", original])
        try #require(written.status == 0, "\(written.output)")
        let mode = try FileManager.default.attributesOfItem(atPath: map)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // A fresh workspace: new keys, new internal ids, the same roster.
        try Self.workspace(cli, fresh, statedOnly: true)
        let back = try cli.run(["data", "import", "--from", "fhir", fhirFolder, "--user-map", map, "-w", fresh])
        #expect(back.status == 0, "\(back.output)")
        let before = try Self.records(original), after = try Self.records(fresh)
        #expect(before.count == 9)
        #expect(after == before)
    }
}
