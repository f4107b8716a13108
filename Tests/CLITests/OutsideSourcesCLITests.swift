import Foundation
import Testing

/// Real-world FHIR and health_metrics files end to end: partial imports with `--rejects`, a
/// summary that fits a screen and counts what was imported, and health_metrics dumps as people
/// actually write them (a `date` column, extra columns, no `--from`).
@Suite(.serialized)
struct OutsideSourcesCLITests {
    static let users = CLI.repoRoot.appendingPathComponent("Tests/CohortImportTests/Fixtures/health-metrics/users.csv").path

    static func workspace() throws -> CLI {
        let cli = try CLI()
        try FHIRImportCLITests.workspace(cli, cli.workspace)
        return cli
    }

    /// A hospital's transaction Bundle for P-0001 (matched by MRN): heart rates at 08:00 + i
    /// minutes, the one at `badAt` out of range (420 /min), and `unmapped` Observations whose
    /// codes each differ and are in no code map.
    static func bundle(heartRates: Int, badAt: Int?, unmapped: Int = 0, otherTypes: Int = 0) -> String {
        var entries = [
            #"{"fullUrl": "urn:uuid:pt-1", "resource": {"resourceType": "Patient", "id": "pt-1", "identifier": [{"system": "http://hospital.example.org/mrn", "value": "MRN1234567"}]}, "request": {"method": "POST", "url": "Patient"}}"#
        ]
        for i in 0..<heartRates {
            let value = i == badAt ? 420 : 60 + i
            entries.append(
                #"{"resource": {"resourceType": "Observation", "status": "final", "code": {"coding": [{"system": "http://loinc.org", "code": "8867-4"}]}, "subject": {"reference": "urn:uuid:pt-1"}, "effectiveDateTime": "2026-09-10T08:\#(String(format: "%02d", i)):00+02:00", "valueQuantity": {"value": \#(value), "unit": "/min", "system": "http://unitsofmeasure.org", "code": "/min"}}, "request": {"method": "POST", "url": "Observation"}}"#)
        }
        for i in 0..<unmapped {
            entries.append(
                #"{"resource": {"resourceType": "Observation", "status": "final", "code": {"coding": [{"system": "http://loinc.org", "code": "9999-\#(i)"}]}, "subject": {"reference": "urn:uuid:pt-1"}, "effectiveDateTime": "2026-09-10T09:00:00+02:00", "valueQuantity": {"value": 1, "unit": "1"}}, "request": {"method": "POST", "url": "Observation"}}"#)
        }
        for i in 0..<otherTypes {
            entries.append(#"{"resource": {"resourceType": "Type\#(i)", "id": "x\#(i)"}}"#)
        }
        return #"{"resourceType": "Bundle", "type": "transaction", "entry": ["# + entries.joined(separator: ",\n") + "]}\n"
    }

    @Test func aBundleWithOneOutOfRangeValueImportsTheRestWithRejects() throws {
        let cli = try Self.workspace()
        defer { cli.cleanup() }
        let bundle = try cli.write("hospital.json", Self.bundle(heartRates: 4, badAt: 2))
        // Without --rejects: one transaction, refused whole, as documented.
        let whole = try cli.ws("data", "import", bundle)
        #expect(whole.status != 0 && whole.stderr.contains("out of range for heart_rate"), "\(whole.output)")
        #expect(try FHIRImportCLITests.records(cli.workspace).isEmpty)
        // With --rejects: the three good values are stored, the bad one written with its reason.
        let rejects = cli.path("rejects.csv")
        let partial = try cli.ws("data", "import", bundle, "--rejects", rejects)
        #expect(partial.status == 0, "\(partial.output)")
        #expect(partial.stdout.contains("3 records imported (3 new, 0 already stored)"), "\(partial.stdout)")
        #expect(partial.stdout.contains("imported per kind: heart_rate 3"), "\(partial.stdout)")
        #expect(partial.stdout.contains("refused: 1 out of range for heart_rate"), "\(partial.stdout)")
        // (The temporary folder's random name, printed with the rejects path, may hold "420" itself.)
        let printed = partial.output.replacingOccurrences(of: cli.directory.path, with: "<dir>")
        #expect(!printed.contains("420") && !printed.contains("MRN1234567"))
        #expect(try FHIRImportCLITests.records(cli.workspace).count == 3)
        let text = try String(contentsOfFile: rejects, encoding: .utf8)
        let lines = text.split(separator: "\r\n")
        #expect(lines.count == 2, "\(text)")
        #expect(lines.first == "line,field,reason,participant,kind,start,end,value,unit,text,source,note")
        #expect(lines.last?.hasPrefix("1,Bundle.entry[3].resource.valueQuantity.value,out of range for heart_rate") == true, "\(text)")
        #expect(lines.last?.contains(",P-0001,heart_rate,2026-09-10T08:02:00") == true && lines.last?.contains(",420,") == true)
        let mode = try FileManager.default.attributesOfItem(atPath: rejects)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func theSummaryFitsAScreenAndCountsWhatWasImported() throws {
        let cli = try Self.workspace()
        defer { cli.cleanup() }
        let bundle = try cli.write("many-codes.json", Self.bundle(heartRates: 2, badAt: nil, unmapped: 40, otherTypes: 9))
        let r = try cli.ws("data", "import", bundle)
        #expect(r.status == 0, "\(r.output)")
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count <= 12, "\(r.stdout)")
        #expect(r.stdout.contains("skipped: 40 Observation: code not in the code map (40 codes)"), "\(r.stdout)")
        #expect(r.stdout.contains("… and 5 more reasons: --format json lists every reason"), "\(r.stdout)")
        let json = try cli.ws("data", "import", bundle, "--format", "json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        let skipped = try #require((object.first?["tally"] as? [String: Any])?["skipped"] as? [String: Int])
        #expect(skipped.count == 49)
        // Records outside the study period are read but not imported: the per-kind line says so.
        let early = try cli.write("early.json", Self.bundle(heartRates: 2, badAt: nil).replacingOccurrences(of: "2026-09-10T", with: "2026-08-10T"))
        let outside = try cli.ws("data", "import", early)
        #expect(outside.stdout.contains("0 records imported"), "\(outside.stdout)")
        #expect(!outside.stdout.contains("heart_rate 2") && outside.stdout.contains("not imported: 2 records before enrollment"), "\(outside.stdout)")
    }

    /// A dump as `psql \copy (SELECT …)` writes it from a view: `date` instead of `recorded_at`,
    /// the app's `active_minutes` and `calories_burned`, and a column cohort does not know.
    static let dateDump = """
        user_id,date,source,steps,active_minutes,calories_burned,floors,timezone
        0f8fad5b-d9cb-469f-a165-70867728950e,2026-09-10,apple_health,8000,42,2100,3,Europe/Berlin
        0f8fad5b-d9cb-469f-a165-70867728950e,2026-09-11,apple_health,70000000,35,1900,,Europe/Berlin
        7c9e6679-7425-40de-944b-e07fc1f90ae7,2026-09-10,health_connect,5000,,,,America/New_York
        7c9e6679-7425-40de-944b-e07fc1f90ae7,2026-09-11,health_connect,5000,,,,America/New_York,a cell too many

        """

    @Test func aDumpWithADateColumnIsRecognizedAndNothingIsDroppedSilently() throws {
        let cli = try Self.workspace()
        defer { cli.cleanup() }
        let dump = try cli.write("metrics.csv", Self.dateDump)
        let rejects = cli.path("hm-rejects.csv")
        let r = try cli.ws("data", "import", dump, "--user-map", Self.users, "--rejects", rejects)
        #expect(r.status == 0, "\(r.output)")
        #expect(r.stdout.contains("(health-metrics-csv): 3 rows seen, 2 records imported (2 new"), "\(r.stdout)")
        #expect(r.stdout.contains("imported per metric: steps 2"), "\(r.stdout)")
        #expect(r.stdout.contains("refused in all: 2, each written with its reason to \(rejects)"), "\(r.stdout)")
        #expect(r.stdout.contains("refused: 1 out of range for steps"), "\(r.stdout)")
        #expect(r.stdout.contains("refused: 1 expected as many fields as the header has columns"), "\(r.stdout)")
        #expect(r.stdout.contains("skipped: 2 not collected: active_minutes"), "\(r.stdout)")
        #expect(r.stdout.contains("skipped: 2 left out: calories_burned (the table does not say whether it is active or total energy)"), "\(r.stdout)")
        #expect(r.stdout.contains("skipped: 1 column not imported: floors"), "\(r.stdout)")
        #expect(!r.output.contains("70000000") && !r.output.contains("a cell too many"))
        let rejected = try String(contentsOfFile: rejects, encoding: .utf8)
        #expect(rejected.contains("3,steps,out of range for steps") && rejected.contains(",70000000,"), "\(rejected)")
        #expect(rejected.contains("5,,expected as many fields as the header has columns"), "\(rejected)")
        #expect(try FHIRImportCLITests.records(cli.workspace).count == 2)
    }

    @Test func anUnrecognizedDumpIsToldHowToNameIt() throws {
        let cli = try Self.workspace()
        defer { cli.cleanup() }
        let dump = try cli.write("odd.csv", "user_id,day_of_record,steps\n0f8fad5b-d9cb-469f-a165-70867728950e,2026-09-10,8000\n")
        let r = try cli.ws("data", "import", dump)
        #expect(r.status != 0)
        #expect(r.stderr.contains("--from health-metrics --user-map"), "\(r.stderr)")
        let named = try cli.ws("data", "import", "--from", "health-metrics", dump, "--user-map", Self.users)
        #expect(named.status != 0)
        #expect(named.stderr.contains("the header has no recorded_at (or date) column") && !named.stderr.contains("user_id or"), "\(named.stderr)")
    }

    /// Sync bodies: the app's active minutes and calories as the dump's columns; a metric key
    /// cohort does not know is counted, not dropped silently.
    @Test func syncBodiesCountMetricsTheyDoNotImport() throws {
        let cli = try Self.workspace()
        defer { cli.cleanup() }
        let body = #"{"userId":"0f8fad5b-d9cb-469f-a165-70867728950e","source":"apple_health","timezone":"Europe/Berlin","records":[{"recordedAt":"2026-09-11","metrics":{"steps":9100,"activeMinutes":41,"caloriesBurned":2100,"floorsClimbed":7,"standHours":null}}]}"#
        let file = try cli.write("bodies.ndjson", body + "\n")
        let r = try cli.ws("data", "import", "--from", "health-metrics", file, "--user-map", Self.users)
        #expect(r.status == 0, "\(r.output)")
        #expect(r.stdout.contains("1 rows seen, 1 records imported"), "\(r.stdout)")
        #expect(r.stdout.contains("skipped: 1 metric not imported: floorsClimbed"), "\(r.stdout)")
        #expect(r.stdout.contains("skipped: 1 left out: calories_burned") && r.stdout.contains("skipped: 1 not collected: active_minutes"), "\(r.stdout)")
        #expect(!r.stdout.contains("standHours"), "a null value is no value")
    }

    /// A resource the reader cannot map (a heart rate in kg; a Patient no roster entry matches,
    /// and so the Observation that refers to it) is refused with empty record columns; the
    /// resources after it are still read.
    @Test func resourcesTheReaderCannotMapAreRefusedAndTheReadGoesOn() throws {
        let cli = try Self.workspace()
        defer { cli.cleanup() }
        let fixtures = FHIRImportCLITests.fixtures.appendingPathComponent("fhir/errors")
        let lines = try String(contentsOf: fixtures.appendingPathComponent("bad-unit.ndjson"), encoding: .utf8).split(separator: "\n")
        let good = #"{"resourceType": "Observation", "status": "final", "code": {"coding": [{"system": "http://loinc.org", "code": "8867-4"}]}, "subject": {"reference": "Patient/pt-1"}, "effectiveDateTime": "2026-09-10T09:30:00+02:00", "valueQuantity": {"value": 75, "unit": "/min", "system": "http://unitsofmeasure.org", "code": "/min"}}"#
        let stranger = #"{"resourceType": "Patient", "id": "pt-9", "identifier": [{"system": "http://hospital.example.org/mrn", "value": "MRN0000009"}]}"#
        let strangers = #"{"resourceType": "Observation", "status": "final", "code": {"coding": [{"system": "http://loinc.org", "code": "8867-4"}]}, "subject": {"reference": "Patient/pt-9"}, "effectiveDateTime": "2026-09-10T09:30:00+02:00", "valueQuantity": {"value": 75, "unit": "/min", "system": "http://unitsofmeasure.org", "code": "/min"}}"#
        let file = try cli.write("Observation.ndjson", (lines.map(String.init) + [good, stranger, strangers]).joined(separator: "\n") + "\n")
        let rejects = cli.path("fhir-rejects.csv")
        let r = try cli.ws("data", "import", "--from", "fhir", file, "--rejects", rejects)
        #expect(r.status == 0, "\(r.output)")
        #expect(r.stdout.contains("1 records imported (1 new"), "\(r.stdout)")
        #expect(r.stdout.contains("refused in all: 3"), "\(r.stdout)")
        #expect(r.stdout.contains("refused: 1 the unit is not accepted for heart_rate"), "\(r.stdout)")
        #expect(r.stdout.contains("refused: 1 the Patient matches no participant"), "\(r.stdout)")
        #expect(!r.output.contains("MRN0000009"))
        let text = try String(contentsOfFile: rejects, encoding: .utf8)
        let rows = text.split(separator: "\r\n").dropFirst()
        #expect(rows.count == 3, "\(text)")
        #expect(rows.first?.hasPrefix("2,Observation.valueQuantity.code,the unit is not accepted for heart_rate") == true, "\(text)")
        #expect(rows.first?.hasSuffix(",,,,,,,,,") == true, "no record: empty record columns")
        #expect(try FHIRImportCLITests.records(cli.workspace).count == 1)
    }
}
