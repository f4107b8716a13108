import CohortCore
import Foundation
import Testing

@testable import CohortDeid

struct ResidualExceptionListTests {
    let directory: URL
    static let hash = String(repeating: "3f", count: 32)

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("deid-allow-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func file(_ name: String, _ text: String) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url
    }

    /// The same exception written as CSV (extra columns ignored, hash case folded) and as YAML.
    @Test func csvAndYAMLListTheSameException() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let csv = try ResidualExceptionList.load(
            try file(
                "allow.csv",
                "table,column,value_sha256,reviewer,reason,file,line\nsymptom_logs,note,\(Self.hash.uppercased()),Dr. Ada Reviewer,\"asked to be named, IRB amendment 7\",x.csv,2\n"))
        let yaml = try ResidualExceptionList.load(
            try file(
                "allow.yaml",
                "- table: symptom_logs\n  column: note\n  value_sha256: \(Self.hash)\n  reviewer: Dr. Ada Reviewer\n  reason: asked to be named, IRB amendment 7\n"))
        let expected = ResidualException(
            table: "symptom_logs", column: "note", valueSHA256: Self.hash, reviewer: "Dr. Ada Reviewer", reason: "asked to be named, IRB amendment 7")
        #expect(csv.exceptions == [expected])
        #expect(yaml.exceptions == [expected])
        // Covers exactly its table, column and value hash.
        let finding = ResidualFinding(file: "data/csv/symptom_logs.csv", line: 4, kind: .name, field: "note", valueSHA256: Self.hash)
        #expect(csv.exception(covering: finding) == expected)
        var other = finding
        other.field = "text"
        #expect(csv.exception(covering: other) == nil)
        other = finding
        other.valueSHA256 = String(repeating: "00", count: 32)
        #expect(csv.exception(covering: other) == nil)
        #expect(ResidualFinding(file: "data/json/symptom_logs.ndjson", line: 9, kind: .name, field: "note", valueSHA256: Self.hash).table == "symptom_logs")
        #expect(ResidualFinding(file: "data/fhir/bundles/ABC.json", line: 9, kind: .name).table == "Bundle")
    }

    /// Missing reviewer or reason, a malformed hash, a missing column: refused with file, line, field.
    @Test(arguments: [
        ("a.csv", "table,column,value_sha256,reviewer,reason\nsymptom_logs,note,\(hash),,because\n", 2, "reviewer"),
        ("b.csv", "table,column,value_sha256,reviewer,reason\nsymptom_logs,note,\(hash),Ada,\n", 2, "reason"),
        ("c.csv", "table,column,value_sha256,reviewer,reason\nsymptom_logs,note,Hope Field,Ada,why\n", 2, "value_sha256"),
        ("d.csv", "table,column,reviewer,reason\n", 1, "value_sha256"),
        ("e.yaml", "- table: symptom_logs\n  column: note\n  value_sha256: \(hash)\n  reason: why\n", 1, "reviewer"),
    ])
    func incompleteExceptionsAreRefused(name: String, text: String, line: Int, field: String) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = try file(name, text)
        do {
            _ = try ResidualExceptionList.load(url)
            Issue.record("\(name) was accepted")
        } catch let error as CohortError {
            #expect(error.location?.file == url.path && error.location?.line == line && error.location?.field == field, "\(error)")
            #expect(!"\(error)".contains("Hope Field"), "the error repeats a value: \(error)")
        }
    }
}

struct ResidualScanAdviceTests {
    static let policy = DeidentificationPolicy(
        dateShift: .init(maxDays: 30, wholeWeeks: false), kAnonymity: nil,
        fields: ["records.note": FieldRule(.keep), "records.text": FieldRule(.scrub), "flare_event.source": FieldRule(.keep)])

    /// The advice names the place and the rule that published the field, never the value.
    @Test(arguments: [
        ("data/csv/symptom_logs.csv", "note", "data/csv/symptom_logs.csv:3: note: name — records.note is keep: use scrub or drop"),
        ("data/fhir/Observation.ndjson", "note.text", "records.note is keep: use scrub or drop"),
        ("data/fhir/bundles/X.json", "entry.resource.note.text", "records.note is keep: use scrub or drop"),
        ("data/csv/medications.csv", "text", "records.text is scrub and still carries a participant identifier: use drop"),
        ("data/json/flares.ndjson", "source", "flare_event.source is keep: use scrub or drop"),
        ("data/csv/participants.csv", "status", "no rule publishes participant.status"),
    ])
    func adviceNamesTheRule(file: String, field: String, expected: String) {
        let finding = ResidualFinding(file: file, line: 3, kind: .name, field: field, valueSHA256: String(repeating: "1", count: 64))
        let advice = ResidualScanAdvice.advice(for: finding, policy: Self.policy)
        #expect(advice.contains(expected), "\(advice)")
        #expect(advice.hasPrefix("\(file):3: \(field): name"))
    }
}
