import Foundation
import Testing

@testable import CohortCore

extension ProtocolLoaderTests {
    /// `medication_codes` maps names to RxNorm ids; names match without regard to case.
    @Test func medicationCodesLoadLowerCased() throws {
        let text = ProtocolFixture.text([39: "  formats: [csv, json, fhir]\nmedication_codes:\n  Naproxen: \"7258\"\n  ibuprofen: \"5640\""])
        let loaded = try ProtocolLoader.parse(text, file: "test.yaml", templateRoot: nil)
        #expect(loaded.studyProtocol.medicationCodes == ["naproxen": "7258", "ibuprofen": "5640"])
        let decoded = try JSONDecoder().decode(StudyProtocol.self, from: try loaded.canonicalJSON())
        #expect(decoded.medicationCodes == loaded.studyProtocol.medicationCodes)
    }

    /// A code that is not an RXCUI is an error naming the line and key; a name given twice is too.
    @Test func badMedicationCodesAreErrors() {
        let bad = ProtocolFixture.problems(ProtocolFixture.text([39: "  formats: [csv, json, fhir]\nmedication_codes:\n  naproxen: \"RX-7258\""]))
        let problem = bad.errors(at: "medication_codes.naproxen").first
        #expect(problem?.line == 41)
        #expect(problem?.message.contains("RxNorm concept id") == true)
        let twice = ProtocolFixture.problems(ProtocolFixture.text([39: "  formats: [csv, json, fhir]\nmedication_codes:\n  naproxen: \"7258\"\n  Naproxen: \"7258\""]))
        #expect(twice.errors(at: "medication_codes.Naproxen").first?.message.contains("twice") == true)
    }

    /// A protocol without codes pins the same canonical form as before the key existed.
    @Test func protocolsWithoutMedicationCodesKeepTheirCanonicalForm() throws {
        let loaded = try ProtocolLoader.parse(ProtocolFixture.text(), file: "test.yaml", templateRoot: nil)
        #expect(!String(decoding: try loaded.canonicalJSON(), as: UTF8.self).contains("medication_codes"))
        let shipped = try ProtocolLoader.load(contentsOf: repositoryRoot.appendingPathComponent("protocols/axspa-wearables.yaml"))
        #expect(shipped.studyProtocol.medicationCodes["naproxen"] == "7258" && shipped.studyProtocol.medicationCodes["adalimumab"] == "327361")
    }
}
