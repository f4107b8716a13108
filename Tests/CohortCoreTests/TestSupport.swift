import Foundation
import Testing

@testable import CohortCore

/// The package root, found from this file's location (`Tests/CohortCoreTests/TestSupport.swift`).
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// A fresh temporary directory, removed when `body` returns.
func withTemporaryDirectory<R>(_ body: (URL) throws -> R) throws -> R {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-core-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory)
}

/// A valid protocol whose line numbers the bad-input tests rely on: line N is `lines[N - 1]`.
enum ProtocolFixture {
    static let lines = [
        "schema: cohort/protocol@1",  // 1
        "id: minimal-pain",  // 2
        "revision: 1",  // 3
        "title: \"Minimal daily pain diary\"",  // 4
        "institution: \"Example Clinic\"",  // 5
        "principal_investigator:",  // 6
        "  name: \"Dr. Jo Example\"",  // 7
        "irb:",  // 8
        "  board: \"Example IRB\"",  // 9
        "  approval_number: \"IRB-0001\"",  // 10
        "  expires: 2027-01-31",  // 11
        "duration_days: 30",  // 12
        "consent:",  // 13
        "  current_version: \"1.0\"",  // 14
        "  documents:",  // 15
        "    - version: \"1.0\"",  // 16
        "      template: templates/consent/minimal-1.0.mustache",  // 17
        "data_types:",  // 18
        "  symptom_log: [pain]",  // 19
        "compliance:",  // 20
        "  rules:",  // 21
        "    - id: daily-pain",  // 22
        "      data_type: symptom_log",  // 23
        "      min_per_day: 1",  // 24
        "      threshold: 0.8",  // 25
        "deidentification:",  // 26
        "  date_shift:",  // 27
        "    max_days: 30",  // 28
        "  fields:",  // 29
        "    participant.id: pseudonymize",  // 30
        "    participant.sex: keep",  // 31
        "    participant.enrolled_on: shift",  // 32
        "    records.participant: pseudonymize",  // 33
        "    records.kind: keep",  // 34
        "    records.start: shift",  // 35
        "    records.value: keep",  // 36
        "    records.unit: keep",  // 37
        "export:",  // 38
        "  formats: [csv, json, fhir]",  // 39
    ]

    /// The rules protocols/minimal.yaml adds after line 37 to name every field it does not export
    /// (the fixture leaves them out so that tests can add rules and see unnamed-field warnings).
    static let minimalExplicitDrops = [
        "    # Every other field is named too, so the allow-list is complete and loading warns about nothing.",
        "    participant.code: drop",
        "    participant.name: drop",
        "    participant.email: drop",
        "    participant.phone: drop",
        "    participant.birth_date: drop",
        "    participant.age: drop",
        "    participant.address: drop",
        "    participant.zip: drop",
        "    participant.mrn: drop",
        "    participant.devices: drop",
        "    participant.time_zone: drop",
        "    participant.status: keep",
        "    consent.version: keep",
        "    consent.document_sha256: drop",
        "    consent.signed_at: drop",
        "    consent.signature: drop",
        "    consent.sharing: keep",
        "    consent.status: keep",
        "    records.end: drop",
        "    records.text: drop",
        "    records.source: drop",
        "    records.note: drop",
    ]

    /// The fixture with line N replaced by `edits[N]` (which may hold several lines; later line
    /// numbers then move, so tests replace from the bottom or use one-line edits).
    static func text(_ edits: [Int: String] = [:]) -> String {
        lines.enumerated().map { index, line in edits[index + 1] ?? line }.joined(separator: "\n") + "\n"
    }

    /// The problems `text` is rejected with; records an issue when it loads.
    static func problems(_ text: String, file: String = "test.yaml", templateRoot: URL? = nil) -> [ProtocolProblem] {
        do {
            let loaded = try ProtocolLoader.parse(text, file: file, templateRoot: templateRoot)
            Issue.record("expected the protocol to be rejected; it loaded \(loaded.studyProtocol.id)")
            return []
        } catch let error as ProtocolValidationError {
            return error.problems
        } catch {
            Issue.record("expected a ProtocolValidationError, got \(error)")
            return []
        }
    }
}

extension Array where Element == ProtocolProblem {
    /// The errors (not warnings) at `keyPath`.
    func errors(at keyPath: String) -> [ProtocolProblem] { filter { $0.severity == .error && $0.keyPath == keyPath } }
}
