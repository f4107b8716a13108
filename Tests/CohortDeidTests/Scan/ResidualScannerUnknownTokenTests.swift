import CohortCore
import Foundation
import Testing

@testable import CohortDeid

/// The residual scan applies the scrubber's allow-list to free-text fields: a word that is
/// neither known to be safe nor a typed token is a finding, named by file, line and field,
/// never by its value.
struct ResidualScannerUnknownTokenTests {
    @Test func unknownTokensInFreeTextAreFindings() {
        let scanner = ResidualScanner(roster: [])
        #expect(scanner.kinds(inLine: "Featherstone drove me home", freeText: true) == [.unknownToken])
        #expect(scanner.kinds(inLine: "the pain eased after 500 mg", freeText: true).isEmpty)
        #expect(scanner.kinds(inLine: "[NAME] drove me home, [REDACTED] too", freeText: true).isEmpty)
        // Outside free text, only roster identifiers count.
        #expect(scanner.kinds(inLine: "Featherstone drove me home").isEmpty)
    }

    @Test func aCSVNoteColumnIsCheckedAndTheValueNeverShown() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("unknown-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let csv = "pseudonym,kind,note,source\nABC,pain,felt better today,Featherstone\nDEF,pain,Featherstone visited,app\n"
        try csv.write(to: directory.appendingPathComponent("symptom_logs.csv"), atomically: true, encoding: .utf8)
        let result = try ResidualScanner(roster: []).scan(directory: directory)
        #expect(result.findings.map(\.description) == ["symptom_logs.csv:3: note: unknown_token"])
        #expect(result.freeTextValues == 2)
        #expect(!result.summary.contains("Featherstone"))
        #expect(result.summary.hasPrefix("1 finding (1 unreviewed unknown token): 1 file scanned, 2 free-text values"))
    }
}
