import Foundation
import Testing

/// The activity and intake families and the kept Apple Health metadata end to end: the
/// active-living example protocol, the hand-written Apple Health export imported for three
/// participants, exported (CSV, JSON, FHIR), checked by the validators, and re-imported from
/// cohort's own FHIR export into a fresh workspace.
@Suite(.serialized)
struct ActiveLivingCLITests {
    static let fixture = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/apple-health/export.xml")
    static let codes = ["P-0001", "P-0002", "P-0003"]

    /// An active-living workspace at `dir` with three look-alike participants (born 1980-02-29 as
    /// the fixture's `Me` says, female, enrolled 2026-09-01, so k = 3 keeps them all), consented.
    static func workspace(_ cli: CLI, _ dir: String) throws {
        let r = try cli.run(["init", "--dir", dir, "--protocol", "protocols/active-living.yaml"])
        try #require(r.status == 0, "init failed: \(r.output)")
        var roster = CLI.rosterHeader
        for (i, code) in codes.enumerated() {
            roster += "\(code),Simon Tester\(i),simon\(i)@example.net,,1980-02-29,female,,02139,,Europe/Berlin,2026-09-01,Simon's Apple Watch\n"
        }
        try #require(try cli.run(["participant", "import", try cli.write("roster-\(UUID().uuidString).csv", roster), "-w", dir]).status == 0)
        for code in codes {
            let c = try cli.run(["consent", "record", "--sharing", "broad", "--participant", code, "--version", "1.0", "--signed-at", "2026-09-01T12:00:00Z", "-w", dir])
            try #require(c.status == 0, "consent failed: \(c.output)")
        }
    }

    /// participant code, kind, start, end, value of every stored record, sorted.
    static func records(_ dir: String, where condition: String = "1 = 1") throws -> [String] {
        let (status, out) = try CLI.sql(
            "SELECT p.code, r.kind, r.start_ms, coalesce(CAST(r.end_ms AS text), ''), coalesce(CAST(r.value AS text), ''), coalesce(r.text, '') FROM records r JOIN participants p ON p.pk = r.participant_pk WHERE \(condition) ORDER BY 1, 2, 3, 4, 5, 6",
            workspace: dir)
        #expect(status == 0, "\(out)")
        return CLI.rows(out, realColumn: 4)
    }

    /// Imports the fixture for every participant and exports to `out` (no archive); returns the bag's data folder.
    static func importAndExport(_ cli: CLI, formats: String = "csv,json,fhir") throws -> URL {
        try workspace(cli, cli.workspace)
        for code in codes {
            let r = try cli.ws("data", "import", fixture.path, "--participant", code)
            try #require(r.status == 0, "\(r.output)")
            // The Withings user id is dropped; the motion context and the indoor flag are kept.
            #expect(r.stdout.contains("MetadataEntry (kept by keep_metadata, in the note): 2"), "\(r.stdout)")
            #expect(r.stdout.contains("MetadataEntry (values dropped): 1"), "\(r.stdout)")
        }
        // Dated 200 days from now: past the protocol's 90-day embargo, every fixture record is publishable.
        let export = try cli.ws("export", "--recipient", "lab-b", "--formats", formats, "--no-archive", "--out", cli.path("out"), "--created-at", CLI.pastTheEmbargo)
        try #require(export.status == 0, "\(export.output)")
        let readme = try #require(FileManager.default.enumerator(atPath: cli.path("out"))?.compactMap { $0 as? String }.first { $0.hasSuffix("data/README.txt") })
        return URL(fileURLWithPath: cli.path("out")).appendingPathComponent(readme).deletingLastPathComponent()
    }

    static func csvRows(_ url: URL) throws -> [[String: String]] {
        let lines = try String(contentsOf: url, encoding: .utf8).split(whereSeparator: \.isNewline).map(String.init)
        let header = try #require(lines.first).split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        // The rows read here hold no quoted commas except the note, which is last.
        return lines.dropFirst().map { line in
            let cells = line.split(separator: ",", maxSplits: header.count - 1, omittingEmptySubsequences: false).map(String.init)
            return Dictionary(uniqueKeysWithValues: zip(header, cells))
        }
    }

    @Test func newKindsAndKeptMetadataReachTheExport() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let data = try Self.importAndExport(cli)
        // Stored: per participant, the nine activity, body and intake samples and the workout.
        let newKinds = try Self.records(cli.workspace, where: "p.code = 'P-0001' AND r.kind IN ('distance_walking_running','flights_climbed','active_energy','basal_energy','exercise_time','workout','mindful_session','body_fat_percentage','bmi','water_intake','caffeine_intake')")
        #expect(newKinds.count == 11, "\(newKinds)")
        #expect(newKinds.contains { $0.hasPrefix("P-0001|workout|") && $0.hasSuffix("|30.5|running") }, "\(newKinds)")
        #expect(newKinds.contains { $0.hasPrefix("P-0001|distance_walking_running|") && $0.contains("|610.0|") }, "\(newKinds)")

        let activity = try Self.csvRows(data.appendingPathComponent("csv/activity.csv"))
        let workout = try #require(activity.first { $0["kind"] == "workout" })
        #expect(workout["value"] == "30.5" && workout["unit"] == "min" && workout["text"] == "running")
        #expect(workout["note"] == "HKIndoorWorkout=0", "the kept key, in the documented note column")
        #expect(activity.filter { $0["kind"] == "mindful_session" }.allSatisfy { $0["value"] == "5" })
        let intake = try Self.csvRows(data.appendingPathComponent("csv/intake.csv"))
        #expect(Set(intake.map { "\($0["kind"] ?? "") \($0["value"] ?? "") \($0["unit"] ?? "")" }) == ["water_intake 250 mL", "caffeine_intake 95 mg"])
        let biometrics = try Self.csvRows(data.appendingPathComponent("csv/biometrics.csv"))
        #expect(biometrics.contains { $0["kind"] == "body_fat_percentage" && $0["value"] == "21" && $0["unit"] == "%" })
        #expect(biometrics.contains { $0["kind"] == "bmi" && $0["value"] == "22.1" && $0["unit"] == "kg/m2" })
        #expect(biometrics.filter { $0["note"] == "HKMetadataKeyHeartRateMotionContext=1" }.count == 3, "one heart rate sample per participant")
        // The codebook describes the new kinds; the Withings user id and the device names are nowhere.
        let codebook = try String(contentsOf: data.appendingPathComponent("csv/codebook.csv"), encoding: .utf8)
        for text in ["workout", "41982-0", "39156-5", "55430-3", "water_intake"] { #expect(codebook.contains(text), "\(text)") }
        // The note column's description names the kept keys and their form.
        #expect(codebook.contains("key=value entries separated by '; ' (keys: HKMetadataKeyHeartRateMotionContext, HKMetadataKeyWasUserEntered"), "\(codebook)")
        let files = FileManager.default.enumerator(atPath: data.path)?.compactMap { $0 as? String } ?? []
        for file in files {
            guard let content = try? Data(contentsOf: data.appendingPathComponent(file)) else { continue }
            for secret in ["58213377", "Withings User Identifier", "Simon"] {
                #expect(content.range(of: Data(secret.utf8)) == nil, "\(secret) in \(file)")
            }
        }
        // FHIR: the workout's activity type as a component, UCUM units, the activity category.
        let observations = try String(contentsOf: data.appendingPathComponent("fhir/Observation.ndjson"), encoding: .utf8)
        let workoutLine = try #require(observations.split(separator: "\n").first { $0.contains(#""code":"workout""#) })
        #expect(workoutLine.contains(#""valueString":"running""#) && workoutLine.contains(#""code":"activity""#) && workoutLine.contains(#""code":"min""#))
        #expect(observations.contains(#""code":"kg/m2""#) && observations.contains(#""code":"41982-0""#))
    }

    @Test(.enabled(if: ExportCLITests.hasPython, "no .venv/bin/python: run scripts/setup-venv.sh"))
    func exportOfTheNewKindsPassesTheValidators() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let data = try Self.importAndExport(cli)
        try #require(FileManager.default.isExecutableFile(atPath: ExportCLITests.python), "CI needs .venv (scripts/setup-venv.sh)")
        let (csv, csvOut) = try CLI.tool(ExportCLITests.python, [CLI.repoRoot.appendingPathComponent("Tests/interop/check_csv.py").path, data.appendingPathComponent("csv").path])
        #expect(csv == 0 && csvOut.contains("OK: CSV checks passed"), "check_csv: \(csvOut)")
        #expect(csvOut.contains("activity.csv") && csvOut.contains("intake.csv"), "\(csvOut)")
        let (fhir, fhirOut) = try CLI.tool(ExportCLITests.python, [CLI.repoRoot.appendingPathComponent("Tests/interop/check_fhir.py").path, data.appendingPathComponent("fhir").path])
        #expect(fhir == 0 && fhirOut.contains("OK: FHIR R4 checks passed"), "check_fhir: \(fhirOut)")
    }

    @Test func cohortsOwnFHIRExportOfTheNewKindsReimports() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let data = try Self.importAndExport(cli, formats: "csv,fhir")
        let map = cli.path("lab-b-map.csv")
        let written = try cli.ws("data", "pseudonym-map", "--recipient", "lab-b", "--out", map)
        try #require(written.status == 0, "\(written.output)")
        let fresh = cli.path("fresh")
        try Self.workspace(cli, fresh)
        let back = try cli.run(["data", "import", "--from", "fhir", data.appendingPathComponent("fhir").path, "--user-map", map, "-w", fresh])
        #expect(back.status == 0, "\(back.output)")
        // Sleep stages travel in no FHIR element cohort writes, so text is compared for workouts only.
        let sql = "r.kind <> 'sleep_duration'"
        let before = try Self.records(cli.workspace, where: sql), after = try Self.records(fresh, where: sql)
        #expect(before.count == 3 * 17, "\(before.count)")
        #expect(after == before)
        #expect(after.filter { $0.contains("|workout|") }.allSatisfy { $0.hasSuffix("|running") })
    }
}
