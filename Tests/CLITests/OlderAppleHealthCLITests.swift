import Foundation
import Testing

/// An Apple Health export.xml shaped like older and hand-cut exports (healthkit-to-sqlite's test
/// export is one): no XML declaration (and, once, a byte-order mark first), the `HKWasUserEntered`
/// spelling, a watch known only by its hardware identifier, a workout with total distance and
/// energy attributes — imported without `--from` and exported under the shipped active-living
/// protocol, which keeps `HKMetadataKeyWasUserEntered` and maps `Apple Watch` to `smartwatch`.
@Suite(.serialized)
struct OlderAppleHealthCLITests {
    static let export = """
        <HealthData locale="en_US">
         <ExportDate value="2026-09-20 10:36:11 -0700"/>
         <Record type="HKQuantityTypeIdentifierBodyMassIndex" sourceName="Scale app" unit="count" startDate="2026-09-03 08:25:32 +0200" endDate="2026-09-03 08:25:32 +0200" value="22.5">
          <MetadataEntry key="Vendor User Identifier" value="88112233"/>
          <MetadataEntry key="HKWasUserEntered" value="0"/>
         </Record>
         <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Apple Watch" device="&lt;&lt;HKDevice: 0x282a45810&gt;, name:Apple Watch, manufacturer:Apple, model:Watch, hardware:Watch2,4, software:4.3.1&gt;" unit="count/min" startDate="2026-09-03 09:28:55 +0200" endDate="2026-09-03 09:28:55 +0200" value="72"/>
         <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="5.2" durationUnit="min" totalDistance="0.5" totalDistanceUnit="mi" totalEnergyBurned="48.7" totalEnergyBurnedUnit="kcal" sourceName="Apple Watch" startDate="2026-09-04 07:25:41 +0200" endDate="2026-09-04 07:30:52 +0200"/>
        </HealthData>

        """

    @Test func importsWithoutDeclarationKeepsTheOldKeyAndExportsTheWatchAsSmartwatch() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        try ActiveLivingCLITests.workspace(cli, cli.workspace)
        for (i, code) in ActiveLivingCLITests.codes.enumerated() {
            // The first file starts with a byte-order mark; none has an XML declaration; no --from.
            let file = try cli.write("export-\(i).xml", (i == 0 ? "\u{FEFF}" : "") + Self.export)
            let r = try cli.ws("data", "import", file, "--participant", code)
            try #require(r.status == 0, "\(r.output)")
            #expect(r.stdout.contains("3 samples, 3 new"), "\(r.stdout)")
            #expect(r.stdout.contains("Workout totalDistance (left out: the workout's distance samples are imported as distance_walking_running): 1"), "\(r.stdout)")
            #expect(r.stdout.contains("Workout totalEnergyBurned (left out: the workout's energy samples are imported as active_energy): 1"), "\(r.stdout)")
            #expect(r.stdout.contains("MetadataEntry (kept by keep_metadata, in the note): 1"), "\(r.stdout)")
        }
        // --rejects is refused, not silently ignored: the summary already counts what is left out.
        let rejects = try cli.ws("data", "import", try cli.write("again.xml", Self.export), "--participant", "P-0001", "--rejects", cli.path("r.csv"))
        #expect(rejects.status != 0 && rejects.stderr.contains("--rejects does not apply to an Apple Health export"), "\(rejects.output)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("r.csv")))
        // Dated 200 days from now: past the protocol's embargo, so every sample is published whatever the shift.
        let export = try cli.ws("export", "--recipient", "lab-b", "--formats", "csv", "--no-archive", "--out", cli.path("out"), "--created-at", CLI.pastTheEmbargo)
        try #require(export.status == 0, "\(export.output)")
        let biometrics = try #require(
            FileManager.default.enumerator(atPath: cli.path("out"))?.compactMap { $0 as? String }.first { $0.hasSuffix("csv/biometrics.csv") })
        let rows = try ActiveLivingCLITests.csvRows(URL(fileURLWithPath: cli.path("out")).appendingPathComponent(biometrics))
        #expect(rows.filter { $0["kind"] == "bmi" && $0["note"] == "HKMetadataKeyWasUserEntered=0" }.count == 3, "\(rows)")
        #expect(rows.filter { $0["kind"] == "heart_rate" }.map { $0["source"] } == ["smartwatch", "smartwatch", "smartwatch"], "\(rows)")
        let all = try String(contentsOfFile: URL(fileURLWithPath: cli.path("out")).appendingPathComponent(biometrics).path, encoding: .utf8)
        #expect(!all.contains("88112233") && !all.contains("Watch2,4"))
    }
}
