import CohortCore
import Foundation
import Testing

@testable import CohortExport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct ExportWriterTests {
    static let goldenDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden", isDirectory: true)

    /// Every regular file under `directory`, as paths relative to it, sorted.
    static func files(under directory: URL) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: directory.path) else { return [] }
        var result: [String] = []
        while let path = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent(path).path, isDirectory: &isDirectory),
                !isDirectory.boolValue, !path.hasPrefix(".")
            {
                result.append(path)
            }
        }
        return result.sorted()
    }

    // MARK: - Golden files

    /// Each format's files match the reviewed goldens byte for byte (`COHORT_UPDATE_GOLDEN=1` rewrites them).
    @Test(arguments: ExportFormat.allCases)
    func matchesGoldenFiles(format: ExportFormat) throws {
        let root = try ExportFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try ExportFixture.export(to: root, context: ExportFixture.context(formats: [format]))
        // Each format writes its own folder (csv/, json/, fhir/), mirrored under Golden/.
        let data = root.appendingPathComponent("data")
        let golden = Self.goldenDirectory
        let folder = format.rawValue
        let produced = Self.files(under: data.appendingPathComponent(folder)).map { "\(folder)/\($0)" }
        if ProcessInfo.processInfo.environment["COHORT_UPDATE_GOLDEN"] == "1" {
            try? FileManager.default.removeItem(at: golden.appendingPathComponent(folder))
            for path in produced {
                let target = golden.appendingPathComponent(path)
                try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(contentsOf: data.appendingPathComponent(path)).write(to: target)
            }
        }
        #expect(Self.files(under: data) == produced, "only the chosen format's folder is written")
        #expect(produced == Self.files(under: golden.appendingPathComponent(folder)).map { "\(folder)/\($0)" }, "the set of files differs from the goldens")
        for path in produced {
            let actual = try Data(contentsOf: data.appendingPathComponent(path))
            let expected = try? Data(contentsOf: golden.appendingPathComponent(path))
            #expect(actual == expected, "\(path) differs from its golden (COHORT_UPDATE_GOLDEN=1 to regenerate)")
        }
    }

    /// Two exports of the same rows are byte-identical: FHIR ids are derived, not random.
    @Test func exportsAreReproducible() throws {
        let a = try ExportFixture.temporaryDirectory()
        let b = try ExportFixture.temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(at: a)
            try? FileManager.default.removeItem(at: b)
        }
        let filesA = try ExportFixture.export(to: a)
        let filesB = try ExportFixture.export(to: b)
        #expect(filesA == filesB)
        for file in filesA {
            #expect(try Data(contentsOf: a.appendingPathComponent(file.path)) == Data(contentsOf: b.appendingPathComponent(file.path)))
        }
    }

    /// The returned list names every file with its row count and exact size.
    @Test func reportsFilesRowsAndBytes() throws {
        let root = try ExportFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let files = try ExportFixture.export(to: root)
        let byPath = Dictionary(uniqueKeysWithValues: files.map { ($0.path, $0) })
        #expect(Set(files.map(\.path)) == Set(Self.files(under: root)))
        #expect(byPath["data/csv/participants.csv"]?.rows == 2)
        #expect(byPath["data/csv/consents.csv"]?.rows == 3)
        #expect(byPath["data/csv/biometrics.csv"]?.rows == 3)
        #expect(byPath["data/json/symptom_logs.ndjson"]?.rows == 3)
        #expect(byPath["data/fhir/Observation.ndjson"]?.rows == 9, "8 records' Observations and 1 daily total of steps")
        #expect(byPath["data/fhir/MedicationStatement.ndjson"]?.rows == 1)
        #expect(byPath["data/fhir/Patient.ndjson"]?.rows == 2)
        // study + patient + subject + 2 consents + provenance + 6 records + 1 daily total
        #expect(byPath["data/fhir/bundles/K7QF2M4XRB6TNV3D.json"]?.rows == 13)
        #expect(byPath["data/csv/codebook.csv"]?.rows == 0)
        for file in files {
            let size = try FileManager.default.attributesOfItem(atPath: root.appendingPathComponent(file.path).path)[.size] as? Int
            #expect(size == file.bytes, "\(file.path)")
        }
    }

    // MARK: - Content rules

    /// Every CSV passes a strict RFC 4180 reader; the tricky note survives quoting unchanged.
    @Test func csvIsStrictRFC4180() throws {
        let root = try ExportFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try ExportFixture.export(to: root, context: ExportFixture.context(formats: [.csv]))
        let csv = root.appendingPathComponent("data/csv")
        for name in Self.files(under: csv) where name.hasSuffix(".csv") {
            let records = try StrictCSV.parse(Array(try Data(contentsOf: csv.appendingPathComponent(name))))
            #expect(records.count >= 1, "\(name)")
        }
        let symptoms = try StrictCSV.parse(Array(try Data(contentsOf: csv.appendingPathComponent("symptom_logs.csv"))))
        let header = try #require(symptoms.first)
        let note = try #require(header.firstIndex(of: "note"))
        #expect(symptoms[1][note] == "Bad night, \"very\" stiff\r\nafter [NAME] called; ünïcode ok")
        // `source` has a rule for biometrics only, so the symptom log's source is left out.
        #expect(header == ["pseudonym", "kind", "start", "end", "value", "unit", "text", "note"])
        let biometrics = try StrictCSV.parse(Array(try Data(contentsOf: csv.appendingPathComponent("biometrics.csv"))))
        #expect(biometrics.first?.contains("source") == true)
    }

    /// Columns exist only for fields the policy keeps, in CSV, NDJSON and datapackage.json alike.
    @Test func columnsFollowThePolicy() throws {
        let root = try ExportFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try ExportFixture.export(to: root, context: ExportFixture.context(formats: [.csv, .json], policy: ExportFixture.narrowPolicy))
        let biometrics = try StrictCSV.parse(Array(try Data(contentsOf: root.appendingPathComponent("data/csv/biometrics.csv"))))
        #expect(biometrics.first == ["pseudonym", "kind", "start", "end", "value", "text"])
        let participants = try StrictCSV.parse(Array(try Data(contentsOf: root.appendingPathComponent("data/csv/participants.csv"))))
        // `utc_offset` has no rule of its own: it is there because the policy publishes instants.
        #expect(participants.first == ["pseudonym", "sex", "birth_year", "age_band", "enrolled_on", "status", "withdrawn_at", "utc_offset"])
        let line = try #require(String(decoding: try Data(contentsOf: root.appendingPathComponent("data/json/biometrics.ndjson")), as: UTF8.self).split(separator: "\n").first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["pseudonym", "kind", "start", "end", "value", "text"])
        let package = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: root.appendingPathComponent("data/csv/datapackage.json"))) as? [String: Any])
        let resources = try #require(package["resources"] as? [[String: Any]])
        let schema = try #require(resources.first { $0["name"] as? String == "biometrics" }?["schema"] as? [String: Any])
        let names = (schema["fields"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(names == ["pseudonym", "kind", "start", "end", "value", "text"])
    }

    /// NDJSON rows are typed: numbers as numbers, instants as ISO 8601 strings with their offset.
    @Test func ndjsonIsTyped() throws {
        let root = try ExportFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try ExportFixture.export(to: root, context: ExportFixture.context(formats: [.json]))
        let text = String(decoding: try Data(contentsOf: root.appendingPathComponent("data/json/biometrics.ndjson")), as: UTF8.self)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines[0].contains("\"start\":\"2025-03-11T08:31:05.250+01:00\""))
        #expect(lines[0].contains("\"value\":72.5"))
        #expect(lines[1].contains("\"value\":12034,"))
        let study = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: root.appendingPathComponent("data/json/study.json"))) as? [String: Any])
        #expect((study["tables"] as? [String: Int])?["biometrics"] == 3)
        #expect(study["protocol_sha256"] as? String == String(repeating: "a", count: 64))
        #expect((study["exclusions"] as? [String: Int]) == ["withdrawn-exclude": 1])
    }

    /// Inside a Bundle every reference is a `urn:uuid:` that names an entry's `fullUrl`.
    @Test func bundleReferencesResolve() throws {
        let root = try ExportFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try ExportFixture.export(to: root, context: ExportFixture.context(formats: [.fhir]))
        let data = try Data(contentsOf: root.appendingPathComponent("data/fhir/bundles/W3HZ7P5LCA2YUE7G.json"))
        let bundle = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(bundle["type"] as? String == "collection")
        let entries = try #require(bundle["entry"] as? [[String: Any]])
        var fullUrls: Set<String> = []
        for entry in entries {
            let resource = try #require(entry["resource"] as? [String: Any])
            let id = try #require(resource["id"] as? String)
            #expect(entry["fullUrl"] as? String == "urn:uuid:\(id)")
            fullUrls.insert("urn:uuid:\(id)")
        }
        let text = String(decoding: data, as: UTF8.self)
        let references = text.components(separatedBy: "\"reference\":\"").dropFirst().compactMap { $0.split(separator: "\"").first.map(String.init) }
        #expect(!references.isEmpty)
        for reference in references { #expect(fullUrls.contains(reference), "\(reference)") }
        let subject = entries.compactMap { $0["resource"] as? [String: Any] }.first { $0["resourceType"] as? String == "ResearchSubject" }
        #expect(subject?["status"] as? String == "withdrawn")
    }

    @Test func resourceIDsAreVersion5StyleUUIDs() {
        let id = ResourceID.make(["Patient", "study", "PSEUDONYM"])
        #expect(UUID(uuidString: id) != nil)
        #expect(Array(id)[14] == "5")
        #expect("89ab".contains(Array(id)[19]))
        #expect(id == ResourceID.make(["Patient", "study", "PSEUDONYM"]))
        #expect(id != ResourceID.make(["Patient", "study", "PSEUDONYN"]))
    }

    /// Issue 27: a consent whose signing the embargo keeps back (no `signed_at`) is written after
    /// the participant's dated ones, whatever order they come in (`cohort verify` relies on it).
    @Test func undatedConsentsAreWrittenAfterDatedOnes() throws {
        let root = try ExportFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let writer = try ExportWriter(dataDirectory: root.appendingPathComponent("data"), context: ExportFixture.context())
        let entry = try #require(ExportFixture.cohort.first)
        var dated = try #require(entry.consents.first)
        dated.version = "1.0"
        var undated = dated
        undated.version = "2.0"
        undated.signedAt = nil
        try writer.beginParticipant(entry.participant, consents: [undated, dated])
        _ = try writer.finish(deidentificationSummary: nil)
        let text = try String(contentsOf: root.appendingPathComponent("data/csv/consents.csv"), encoding: .utf8)
        let lines = text.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let version = try #require(lines.first?.components(separatedBy: ",").firstIndex(of: "version"))
        #expect(lines.dropFirst().map { $0.components(separatedBy: ",")[version] } == ["1.0", "2.0"])
    }

    // MARK: - Errors

    @Test func recordOutsideItsParticipantIsRejected() throws {
        let root = try ExportFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let writer = try ExportWriter(dataDirectory: root.appendingPathComponent("data"), context: ExportFixture.context())
        let record = DeidentifiedRecord(pseudonym: "K7QF2M4XRB6TNV3D", kind: .pain)
        #expect(throws: CohortError.self) { try writer.write(record) }
        try writer.beginParticipant(DeidentifiedParticipant(pseudonym: "OTHER234"), consents: [])
        let error = #expect(throws: CohortError.self) { try writer.write(record) }
        #expect(error?.code == .invalidInput)
        #expect(error?.description.contains("K7QF2M4XRB6TNV3D") == false, "errors never carry pseudonyms")
    }

    @Test func kindNotCollectedIsRejected() throws {
        let root = try ExportFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let writer = try ExportWriter(dataDirectory: root.appendingPathComponent("data"), context: ExportFixture.context())
        try writer.beginParticipant(DeidentifiedParticipant(pseudonym: "ABC234"), consents: [])
        let error = #expect(throws: CohortError.self) { try writer.write(DeidentifiedRecord(pseudonym: "ABC234", kind: .spo2)) }
        #expect(error?.location?.field == "kind")
    }

    @Test func participantStartedTwiceIsRejected() throws {
        let root = try ExportFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let writer = try ExportWriter(dataDirectory: root.appendingPathComponent("data"), context: ExportFixture.context())
        try writer.beginParticipant(DeidentifiedParticipant(pseudonym: "ABC234"), consents: [])
        let error = #expect(throws: CohortError.self) { try writer.beginParticipant(DeidentifiedParticipant(pseudonym: "ABC234"), consents: []) }
        #expect(error?.code == .conflict)
    }

    /// A file that cannot be created fails with a `system` error naming it relative to the bag.
    @Test func unwritableDirectoryNamesTheFile() throws {
        let root = try ExportFixture.temporaryDirectory()
        defer {
            chmod(root.appendingPathComponent("data/csv").path, 0o755)
            try? FileManager.default.removeItem(at: root)
        }
        let csv = root.appendingPathComponent("data/csv", isDirectory: true)
        try FileManager.default.createDirectory(at: csv, withIntermediateDirectories: true)
        // Root ignores permission bits, so also put a folder where the first table file goes.
        try FileManager.default.createDirectory(at: csv.appendingPathComponent("participants.csv"), withIntermediateDirectories: true)
        chmod(csv.path, 0o555)
        let error = #expect(throws: CohortError.self) {
            _ = try ExportWriter(dataDirectory: root.appendingPathComponent("data"), context: ExportFixture.context(formats: [.csv]))
        }
        #expect(error?.code == .system)
        #expect(error?.location?.file == "data/csv/participants.csv")
        #expect(error?.hint != nil)
    }

    // MARK: - Interop

    /// Runs `Tests/interop/<script>` on `data` with the repository's `.venv`; nil when there is none.
    /// The interop validators' Python (`.venv`, made by scripts/setup-venv.sh).
    static let venvPython = ExportFixture.repositoryRoot.appendingPathComponent(".venv/bin/python")
    /// Interop tests run when `.venv` exists, and always under CI (where a missing `.venv` fails
    /// them); elsewhere they are skipped with the reason shown.
    static let interopOrCI = FileManager.default.isExecutableFile(atPath: venvPython.path) || ProcessInfo.processInfo.environment["CI"] != nil
    static let interopReason: Comment = "needs the interop validators in .venv: run scripts/setup-venv.sh"

    static func runInterop(_ script: String, on data: URL) throws -> (status: Int32, output: String) {
        let repo = ExportFixture.repositoryRoot
        let python = venvPython
        try #require(FileManager.default.isExecutableFile(atPath: python.path), "interop checks cannot run: .venv/bin/python not found (scripts/setup-venv.sh failed?)")
        let process = Process()
        process.executableURL = python
        process.arguments = [repo.appendingPathComponent("Tests/interop/\(script)").path, data.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    /// The Python validators (fhir.resources R4, JSON schema, FHIRPath invariants, frictionless,
    /// strict RFC 4180) accept the export. Skipped visibly when `.venv` is absent, failed under CI.
    @Test(.enabled(if: interopOrCI, interopReason)) func pythonInteropChecksPass() throws {
        let root = try ExportFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try ExportFixture.export(to: root)
        for script in ["check_fhir.py", "check_csv.py"] {
            let result = try Self.runInterop(script, on: root.appendingPathComponent("data"))
            #expect(result.status == 0, "\(script) failed:\n\(result.output)")
        }
    }

    /// The same validators fail on a broken export, so a passing run means something.
    @Test(.enabled(if: interopOrCI, interopReason)) func pythonInteropChecksRejectBrokenExports() throws {
        let root = try ExportFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try ExportFixture.export(to: root)
        let data = root.appendingPathComponent("data")
        try Data("pseudonym,kind\nK7QF2M4XRB6TNV3D,pain,extra\n".utf8).write(to: data.appendingPathComponent("csv/symptom_logs.csv"))
        let bundleURL = data.appendingPathComponent("fhir/bundles/K7QF2M4XRB6TNV3D.json")
        let bundle = String(decoding: try Data(contentsOf: bundleURL), as: UTF8.self)
        try Data(bundle.replacingOccurrences(of: "\"subject\":", with: "\"subjekt\":").utf8).write(to: bundleURL)
        let csv = try Self.runInterop("check_csv.py", on: data)
        let fhir = try Self.runInterop("check_fhir.py", on: data)
        #expect(csv.status == 1)
        #expect(csv.output.contains("bare LF"))
        #expect(fhir.status == 1)
        #expect(fhir.output.contains("fhir.resources (R4) rejects Observation"))
    }
}
