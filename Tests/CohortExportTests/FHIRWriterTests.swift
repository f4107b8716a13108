import Testing

@testable import CohortExport
import FoundationEssentials

struct FHIRWriterTests {
    private func observation(subject: String, note: String?, device: String?) -> FHIR.Observation {
        FHIR.Observation(
            id: "id-1", text: FHIR.Narrative("Heart rate"), category: nil,
            code: FHIR.CodeableConcept(coding: [FHIR.Coding(system: "http://loinc.org", code: "8867-4", display: "Heart rate")]),
            subject: FHIR.Reference(reference: subject, display: nil), effectiveDateTime: "2026-01-02T03:04:05Z", effectivePeriod: nil,
            note: note.map { [FHIR.Annotation(text: $0)] }, device: device.map { FHIR.Reference(reference: $0, display: "watch") })
    }

    private func bytes(_ value: some FHIRJSONWritable) -> FHIRJSON {
        var json = FHIRJSON()
        value.write(to: &json)
        return json
    }

    /// The NDJSON line of a record is its Bundle form with the subject rewritten: exactly what
    /// writing the resource with a `Patient/<id>` subject gives. Look-alike text elsewhere
    /// (escaped inside a note) and other references stay as they are.
    @Test(arguments: [
        (nil, nil), ("plain note", nil), ("\"reference\":\"urn:uuid:P1\"", nil), (nil, "Device/urn:uuid:P1"),
        ("urn:uuid:P1", "urn:uuid:P2"),
    ] as [(String?, String?)])
    func rewritesTheSubjectReferenceOnly(note: String?, device: String?) {
        let bundleForm = bytes(observation(subject: "urn:uuid:P1", note: note, device: device))
        let bulkForm = bytes(observation(subject: "Patient/P1", note: note, device: device))
        var out: [UInt8] = [7, 7]
        FHIRWriter.rewriteReferences(in: bundleForm, from: Array("\"urn:uuid:P1\"".utf8), to: Array("\"Patient/P1\"".utf8), into: &out)
        #expect(out == bulkForm.bytes)
        #expect(bundleForm.referenceValues.count == (device == nil ? 1 : 2))
    }

    /// Every reference with the value is rewritten, not only the first.
    @Test func rewritesEveryMatchingReference() {
        let bundleForm = bytes(observation(subject: "urn:uuid:P1", note: "n", device: "urn:uuid:P1"))
        var out: [UInt8] = []
        FHIRWriter.rewriteReferences(in: bundleForm, from: Array("\"urn:uuid:P1\"".utf8), to: Array("\"Patient/P1\"".utf8), into: &out)
        let text = String(decoding: out, as: UTF8.self)
        #expect(text.components(separatedBy: "\"reference\":\"Patient/P1\"").count == 3)
        #expect(!text.contains("urn:uuid"))
    }
}
