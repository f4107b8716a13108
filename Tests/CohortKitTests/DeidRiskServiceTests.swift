import CohortCore
import Foundation
import Testing

@testable import CohortKit
import CohortDeid

struct DeidRiskServiceTests {
    /// A bag folder with a report naming two quasi-identifiers and one sensitive field.
    static func bag(participants: String, statedK: Int = 2) throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("risk-\(UUID().uuidString)", isDirectory: true)
        let csv = root.appendingPathComponent("data/csv", isDirectory: true)
        let reports = root.appendingPathComponent("data/reports", isDirectory: true)
        try FileManager.default.createDirectory(at: csv, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: reports, withIntermediateDirectories: true)
        let report = """
            {"schema":"cohort/deidentification-report@1","k_anonymity":{"requested_k":2,"achieved_k":\(statedK),"classes":2,
            "quasi_identifiers":["sex","zip3"],"suppressed_values":{},"suppressed_participants":0,"generalized":{},
            "sensitive":[{"field":"medication_log.text","table":"medications","column":"text"}]}}
            """
        try Data(report.utf8).write(to: reports.appendingPathComponent("deidentification.json"))
        try Data(participants.utf8).write(to: csv.appendingPathComponent("participants.csv"))
        let medications = "pseudonym,kind,text\r\nA,medication_dose,naproxen\r\nA,medication_dose,naproxen\r\nB,medication_dose,ibuprofen\r\nC,medication_dose,naproxen\r\n"
        try Data(medications.utf8).write(to: csv.appendingPathComponent("medications.csv"))
        return root
    }

    @Test func quasiIdentifiersAndSensitiveFieldsComeFromTheReport() throws {
        let root = try Self.bag(participants: "pseudonym,sex,zip3,age_band\r\nA,female,100,18–<30\r\nB,female,100,30–<40\r\nC,male,,18–<30\r\nD,male,,18–<30\r\n")
        defer { try? FileManager.default.removeItem(at: root) }
        let assessment = try DeidRiskService.assess(path: root)
        #expect(assessment.risk.quasiIdentifiers == ["sex", "zip3"])
        #expect(assessment.risk.k == 2 && assessment.risk.classes == 2)
        // female: {naproxen, ibuprofen}; male: {naproxen, "" for D without rows}.
        #expect(assessment.risk.lDiversity.map(\.field) == ["medications.text"])
        #expect(assessment.risk.lDiversity.first?.l == 2)
        #expect(assessment.holds)
        // age_band is published but the report does not treat it as a quasi-identifier: said so.
        #expect(assessment.warnings.contains { $0.contains("age_band") })
    }

    @Test func aStatedKTheFileDoesNotHaveDoesNotHold() throws {
        let root = try Self.bag(participants: "pseudonym,sex,zip3\r\nA,female,100\r\nB,female,100\r\nC,male,\r\n", statedK: 2)
        defer { try? FileManager.default.removeItem(at: root) }
        let assessment = try DeidRiskService.assess(path: root, extraSensitive: ["medications.kind"])
        #expect(assessment.risk.k == 1 && !assessment.holds)
        #expect(assessment.risk.lDiversity.map(\.field) == ["medications.text", "medications.kind"])
    }

    @Test func errorsNameTheFile() throws {
        let root = try Self.bag(participants: "pseudonym,sex,zip3\r\nA,female\r\n")
        defer { try? FileManager.default.removeItem(at: root) }
        do {
            _ = try DeidRiskService.assess(path: root)
            Issue.record("a short row must be refused")
        } catch let error as CohortError {
            #expect(error.location?.file == "data/csv/participants.csv" && error.location?.line == 2)
            #expect(!error.description.contains("female"))  // never a record value
        }
        #expect(throws: CohortError.self) { try DeidRiskService.assess(path: root, extraSensitive: ["flares.note"]) }
    }
}
