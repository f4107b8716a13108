import Foundation
import Testing

@testable import CohortExport

struct FHIRJSONTests {
    private func viaEncoder(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    private func viaWriter(_ value: some FHIRJSONWritable) -> [UInt8] {
        var json = FHIRJSON()
        value.write(to: &json)
        return json.bytes
    }

    static let texts = [
        "plain", "", "quote \" and backslash \\ and slash /", "line\nbreak\r\ttab", "bell \u{07} nul \u{00} esc \u{1B} \u{08}\u{0C}",
        "Zoë naïve 東京 🙂", "</div> & <b>", "\u{7F} del", "emoji 👩‍👩‍👧 and \u{2028} separator",
    ]
    static let numbers = ["72", "0.5", "-3.25", "1013.2", "0", "123456789", "0.001"]

    @Test(arguments: texts)
    func observationBytesMatchJSONEncoder(text: String) throws {
        for number in Self.numbers {
            let coding = FHIR.Coding(system: "http://loinc.org", code: "8867-4", display: "Heart rate \(text)")
            var observation = FHIR.Observation(
                id: "0f0e", text: FHIR.Narrative(text), category: [FHIR.CodeableConcept(coding: [coding], text: nil)],
                code: FHIR.CodeableConcept(coding: [coding], text: text), subject: FHIR.Reference(reference: "urn:uuid:abc", display: nil),
                effectiveDateTime: "2026-01-02T03:04:05+01:00", effectivePeriod: nil, note: [FHIR.Annotation(text: text)],
                device: FHIR.Reference(reference: nil, display: text))
            observation.valueQuantity = FHIR.Quantity(value: Decimal(string: number), unit: "/min", system: FHIR.ucum, code: "/min")
            #expect(viaWriter(observation) == (try viaEncoder(observation)))

            observation.valueQuantity = nil
            observation.valueString = text
            observation.effectiveDateTime = nil
            observation.effectivePeriod = FHIR.Period(start: "2026-01-02T03:04:05Z", end: nil)
            observation.component = [FHIR.Observation.Component(code: FHIR.CodeableConcept(coding: nil, text: "t"), valueString: text)]
            observation.dataAbsentReason = FHIR.CodeableConcept(coding: [FHIR.Coding(system: nil, code: "masked", display: nil)], text: nil)
            observation.note = nil
            observation.category = nil
            #expect(viaWriter(observation) == (try viaEncoder(observation)))
        }
    }

    @Test(arguments: texts)
    func medicationStatementBytesMatchJSONEncoder(text: String) throws {
        for number in Self.numbers {
            let statement = FHIR.MedicationStatement(
                id: "id-1", text: FHIR.Narrative("Medication dose taken"), medicationCodeableConcept: FHIR.CodeableConcept(coding: nil, text: text),
                subject: FHIR.Reference(reference: "Patient/x", display: nil), effectiveDateTime: nil,
                effectivePeriod: FHIR.Period(start: "2026-01-02T03:04:05-05:00", end: "2026-01-02T04:04:05-05:00"), note: [FHIR.Annotation(text: text)],
                dosage: [.init(doseAndRate: [.init(doseQuantity: FHIR.Quantity(value: Decimal(string: number), unit: "mg", system: FHIR.ucum, code: "mg"))])])
            #expect(viaWriter(statement) == (try viaEncoder(statement)))
        }
    }
}
