import CohortCore
import CohortImport
import Foundation
import Testing

struct FHIRReaderTests {
    /// The roster of the fixtures: two participants found by MRN.
    static let directory = ParticipantDirectory(
        codes: ["P-0001", "P-0002"], mrns: ["MRN1234567": "P-0001", "MRN7654321": "P-0002"],
        timeZones: ["P-0001": "Europe/Berlin", "P-0002": "America/New_York"])

    static func read(_ paths: [String], directory: ParticipantDirectory = directory) throws -> ([SourceRecord], ImportTally) {
        let reader = FHIRReader(directory: directory, settings: Fixtures.settings, collected: Fixtures.collected)
        var records: [SourceRecord] = []
        for path in paths {
            for file in try FHIRReader.files(at: Fixtures.url(path)) { try reader.read(file: file) { records.append($0) } }
        }
        return (records, reader.tally)
    }

    @Test func bulkFolderMapsEveryResourceTypeWithUnitsConverted() throws {
        let (records, tally) = try Self.read(["fhir/bulk"])
        func one(_ kind: RecordKind) throws -> SourceRecord {
            let found = records.filter { $0.kind == kind.rawValue }
            try #require(found.count == 1, "expected one \(kind.rawValue) record, found \(found.count)")
            return found[0]
        }
        #expect(records.count == 9)
        let hr = try one(.heartRate)
        #expect(hr.participant == "P-0001" && hr.value == "72" && hr.unit == "/min" && hr.start == "2026-09-10T08:30:00+02:00")
        #expect(hr.source == "Wrist sensor")
        #expect(try one(.restingHeartRate).value == "58")
        // 0.042 s → 42 ms; 450 min → 7.5 h; /d steps stay whole.
        #expect(abs((Double(try one(.hrvSDNN).value ?? "") ?? 0) - 42) < 1e-9)
        let sleep = try one(.sleepDuration)
        #expect(sleep.value == "7.5" && sleep.unit == "h" && sleep.end == "2026-09-12T06:40:00+02:00")
        let steps = try one(.steps)
        #expect(steps.participant == "P-0002" && steps.value == "8412" && steps.unit == "{steps}")
        #expect(try one(.pain).value == "4")
        // MedicationStatement (400 mg) and MedicationAdministration (0.5 g → 500 mg).
        let doses = records.filter { $0.kind == "medication_dose" }.sorted { $0.start < $1.start }
        #expect(doses.map(\.text) == ["Ibuprofen", "Naproxen"])
        #expect(doses.map(\.value) == ["400", "500"])
        // Condition mapped by the protocol's code map, with SNOMED "moderate" as a score.
        let flare = try one(.flare)
        #expect(flare.participant == "P-0002" && flare.value == "6" && flare.end == "2026-09-18T18:00:00-04:00")
        // What was left out, and why.
        #expect(tally.skipped["not collected: body_mass"] == 1)
        #expect(tally.skipped["status entered-in-error"] == 1)
        #expect(tally.skipped["resource type not imported: Encounter"] == 1)
        #expect(tally.skipped["Observation: code not in the code map (http://loinc.org|85354-9)"] == 1)
        #expect(tally.skipped["Observation.component: code not in the code map (http://loinc.org|8480-6)"] == 1)
        #expect(tally.skipped["Observation.component: code not in the code map (http://loinc.org|8462-4)"] == 1)
        #expect(tally.skipped["Condition: code not in the code map (http://snomed.info/sct|38341003)"] == 1)
        #expect(tally.perItem.values.reduce(0, +) == records.count)
        #expect(tally.patients == 2)
    }

    @Test func bundlesResolveFullUrlsAndIncludedPatients() throws {
        let (records, tally) = try Self.read(["fhir/bundle-transaction.json", "fhir/bundle-searchset.json"])
        #expect(records.map(\.participant) == ["P-0001", "P-0002"])
        #expect(records.map(\.kind) == ["heart_rate", "resting_heart_rate"])
        #expect(records.map(\.value) == ["66", "61"])
        // Errors in a Bundle name the entry.
        #expect(records[0].origins["value"] == "Bundle.entry[0].resource.valueQuantity.value")
        #expect(tally.seen == 4)
    }

    @Test(arguments: [
        ("fhir/errors/bad-unit.ndjson", 2, "Observation.valueQuantity.code"),
        ("fhir/errors/unmatched-patient.ndjson", 1, "Patient.identifier"),
        ("fhir/errors/no-effective.ndjson", 2, "Observation.effective[x]"),
        ("fhir/errors/unknown-subject.ndjson", 1, "Observation.subject.reference"),
        ("fhir/errors/history-bundle.json", 1, "Bundle.type"),
    ])
    func errorsNameFileLineAndFHIRPath(path: String, line: Int, element: String) throws {
        do {
            _ = try Self.read([path])
            Issue.record("\(path) was accepted")
        } catch let error as CohortError {
            #expect(error.location?.file == Fixtures.url(path).path)
            #expect(error.location?.line == line)
            #expect(error.location?.field == element)
            // Never a value: no MRN, no measured number.
            for value in ["MRN0000000", "MRN1234567", "72"] { #expect(!error.description.contains(value)) }
        }
    }

    @Test func aPatientIsMatchedOnlyInTheNamedSystem() throws {
        // The same MRN value under another system matches nobody: the system is what the protocol names.
        let line = #"{"resourceType":"Patient","id":"x","identifier":[{"system":"http://other.example.org/id","value":"MRN1234567"}]}"#
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("fhir-\(UUID().uuidString).ndjson")
        try Data(line.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let reader = FHIRReader(directory: Self.directory, settings: Fixtures.settings, collected: Fixtures.collected)
        #expect(throws: CohortError.self) { try reader.read(file: url) { _ in } }
    }

    @Test func anExportRecipientsPseudonymsMapBackAndTheShiftIsUndone() throws {
        // Published at Berlin's standard offset (+01:00) on the shifted calendar: 08:30+01:00 on
        // 2026-09-01 is 09:30 Berlin summer time; moved back 10 days → 2026-09-11T09:30 local.
        let lines = [
            #"{"resourceType":"Patient","id":"p","identifier":[{"system":"https://cohort.example.org/fhir/sid/axspa-wearables/pseudonym","value":"ABCDEFGHJKMNPQRS"}]}"#,
            #"{"resourceType":"Observation","id":"o","status":"final","code":{"coding":[{"system":"http://loinc.org","code":"8867-4"}]},"subject":{"reference":"Patient/p"},"effectiveDateTime":"2026-09-01T08:30:00+01:00","valueQuantity":{"value":70,"unit":"/min","system":"http://unitsofmeasure.org","code":"/min"}}"#,
        ]
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("fhir-\(UUID().uuidString).ndjson")
        try Data(lines.joined(separator: "\n").utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        var directory = Self.directory
        directory.pseudonyms["ABCDEFGHJKMNPQRS"] = .init(code: "P-0001", shiftDays: -10, timeZone: "Europe/Berlin")
        let reader = FHIRReader(directory: directory, settings: Fixtures.settings, collected: Fixtures.collected)
        var records: [SourceRecord] = []
        try reader.read(file: url) { records.append($0) }
        #expect(records.map(\.participant) == ["P-0001"])
        #expect(records.map(\.start) == ["2026-09-11T09:30:00"])
    }

    @Test(.enabled(if: Fixtures.hasPython, "needs .venv with fhir.resources (scripts/setup-venv.sh); required in CI"))
    func fixturesAreValidFHIRR4() throws {
        let script = Fixtures.repoRoot.appendingPathComponent("Tests/interop/check_fhir_input.py").path
        let fhir = Fixtures.url("fhir")
        let (status, output) = try Fixtures.run(
            Fixtures.python,
            [script, fhir.appendingPathComponent("bulk").path, fhir.appendingPathComponent("bundle-transaction.json").path,
             fhir.appendingPathComponent("bundle-searchset.json").path, fhir.appendingPathComponent("errors").path])
        #expect(status == 0, "\(output)")
        #expect(output.contains("ok: "))
    }

    /// cohort's own export writes daily totals beside the samples; reading them back would count
    /// each day twice, so they are skipped and counted.
    @Test func dailyTotalsOfCohortsOwnExportAreSkipped() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fhir-totals-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("Observation.ndjson")
        let patient = #"{"resourceType": "Patient", "id": "pt-1", "identifier": [{"system": "http://hospital.example.org/mrn", "value": "MRN1234567"}]}"#
        let total = #"{"resourceType": "Observation", "status": "final", "code": {"coding": [{"system": "\#(Coding.localSystem)", "code": "daily_total_steps"}]}, "subject": {"reference": "Patient/pt-1"}, "effectivePeriod": {"start": "2026-09-10T00:00:00+02:00", "end": "2026-09-11T00:00:00+02:00"}, "valueQuantity": {"value": 1100, "unit": "{steps}", "system": "http://unitsofmeasure.org", "code": "{steps}"}}"#
        try Data((patient + "\n" + total + "\n").utf8).write(to: file)
        let reader = FHIRReader(directory: Self.directory, settings: Fixtures.settings, collected: Fixtures.collected)
        var records: [SourceRecord] = []
        try reader.read(file: file) { records.append($0) }
        #expect(records.isEmpty)
        #expect(reader.tally.skipped == ["Observation: a daily total (derived from the samples, which are imported)": 1])
    }
}
