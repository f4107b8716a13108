import Foundation
import Testing

/// `cohort data import` of an Apple Health export, end to end through the built binary.
struct AppleHealthCLITests {
    static let fixture = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/apple-health/export.xml")

    /// A workspace whose participant P-0001 (born 1980-02-29, female) was enrolled on 2026-09-01,
    /// the fixture's study period, and consented that day.
    static func workspace() throws -> CLI {
        let cli = try CLI.withWorkspace()
        let roster = try cli.write(
            "roster.csv", CLI.rosterHeader + "P-0001,Simon Tester,simon@example.net,,1980-02-29,female,,02139,,Europe/Berlin,2026-09-01,Simon's Apple Watch\n")
        let r = try cli.ws("participant", "import", roster)
        #expect(r.status == 0, "\(r.output)")
        let c = try cli.ws("consent", "record", "--sharing", "broad", "--participant", "P-0001", "--version", "1.0", "--signed-at", "2026-09-01T12:00:00Z")
        #expect(c.status == 0, "\(c.output)")
        return cli
    }

    /// The unpacked export folder: export.xml, a route and an ECG next to it.
    static func folder(in cli: CLI) throws -> String {
        let root = cli.directory.appendingPathComponent("apple_health_export")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("workout-routes"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: root.appendingPathComponent("electrocardiograms"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: fixture, to: root.appendingPathComponent("export.xml"))
        try Data("<gpx><trkpt lat=\"52.520817\" lon=\"13.409419\"/></gpx>".utf8).write(to: root.appendingPathComponent("workout-routes/route_1.gpx"))
        try Data("Name,Simon Tester\n".utf8).write(to: root.appendingPathComponent("electrocardiograms/ecg_1.csv"))
        return root.path
    }

    @Test func importsTheFolderSniffedAndReportsPerType() throws {
        let cli = try Self.workspace()
        defer { cli.cleanup() }
        let folder = try Self.folder(in: cli)
        let r = try cli.ws("data", "import", folder, "--participant", "P-0001", "--format", "json")
        #expect(r.status == 0, "\(r.output)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let types = try #require(summary["types"] as? [[String: Any]])
        let heart = try #require(types.first { $0["type"] as? String == "HKQuantityTypeIdentifierHeartRate" })
        #expect(heart["seen"] as? Int == 5)
        #expect(heart["imported"] as? Int == 2)
        #expect(heart["outside_study_period"] as? Int == 1)
        #expect(heart["unit_refused"] as? Int == 1)
        #expect(heart["value_refused"] as? Int == 1)
        let skipped = try #require(summary["skipped"] as? [String: Int])
        #expect(skipped["workout-routes/*.gpx (GPS, not imported)"] == 1)
        #expect(skipped["electrocardiograms/*.csv (ECG, not imported)"] == 1)
        #expect(summary["me_check"] as? String == "matched")
        #expect(try cli.count("records") == 9)
        // The route's coordinates, the ECG and the device's name never reach the database.
        let database = try cli.databaseBytes()
        // (A coordinate with six decimals: "52.52" alone turns up in timestamps such as 00:52:52.52….)
        for text in ["52.520817", "13.409419", "Simon", "58213377"] { #expect(database.range(of: Data(text.utf8)) == nil, "\(text)") }

        // Again, as a table, with --from: nothing new.
        let again = try cli.ws("data", "import", folder, "--from", "apple-health", "--participant", "P-0001")
        #expect(again.status == 0, "\(again.output)")
        #expect(again.stdout.contains("30 samples, 0 new, 10 already stored"))
        #expect(again.stdout.contains("HKQuantityTypeIdentifierStepCount"))
        #expect(try cli.count("records") == 9)
    }

    @Test func refusesWithoutAParticipantAndNamesTheLineOfBrokenXML() throws {
        let cli = try Self.workspace()
        defer { cli.cleanup() }
        let missing = try cli.ws("data", "import", Self.fixture.path)
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("--participant"))
        let text = try String(contentsOf: Self.fixture, encoding: .utf8).replacingOccurrences(of: "</HealthData>", with: "</HealthDat>")
        let broken = try cli.write("export.xml", text)
        let r = try cli.ws("data", "import", broken, "--participant", "P-0001")
        #expect(r.status != 0)
        #expect(r.stderr.contains("export.xml:"))
        #expect(r.stderr.contains("not well-formed"))
        #expect(try cli.count("records") == 0)
        let unknown = try cli.ws("data", "import", broken, "--from", "garmin", "--participant", "P-0001")
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("apple-health"))
    }
}
