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

    /// One reused writer with memo slots (as the FHIR worker writes records) gives, resource after
    /// resource, the bytes JSONEncoder gives each alone — slots seeing the same value again, and a
    /// slot seeing other categories, codes and narratives (nil ones too) after a first one.
    /// The narrative's XHTML has no `&`, `<` or `>` of the text left as it was, a combining mark
    /// after one included.
    @Test(arguments: ["a < b & c > d", "<\u{301}script>", "&\u{301}amp;", "plain", "Zoë <🙂>"])
    func narrativesEscapeEveryMarkupByte(text: String) {
        let div = FHIR.Narrative(text).div
        let inner = div.utf8.drop { $0 != UInt8(ascii: ">") }.dropFirst().dropLast("</div>".utf8.count)
        #expect(!inner.contains(UInt8(ascii: "<")) && !inner.contains(UInt8(ascii: ">")))
        // Each reference read back by bytes (as an XML reader does) gives the text.
        var read: [UInt8] = []
        var rest = Array(inner)[...]
        while let byte = rest.first {
            if byte == UInt8(ascii: "&"), let end = rest.firstIndex(of: UInt8(ascii: ";")) {
                let name = String(decoding: rest[rest.startIndex + 1..<end], as: UTF8.self)
                let character = ["lt": "<", "gt": ">", "amp": "&"][name]
                #expect(character != nil, "\(name)")
                read += Array((character ?? "").utf8)
                rest = rest[(end + 1)...]
            } else {
                read.append(byte)
                rest = rest.dropFirst()
            }
        }
        #expect(read == Array(text.utf8))
    }

    @Test func memoizedMembersWriteWhatTheEncoderWrites() throws {
        var json = FHIRJSON()
        var state: UInt64 = 28
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        var seen = 0
        for round in 0..<600 {
            let text = Self.texts[round % Self.texts.count]
            let pick = next(4)
            let coding = FHIR.Coding(system: "http://loinc.org", code: ["8867-4", "41950-7", "x"][pick % 3], display: pick == 3 ? text : "Heart rate")
            let category = pick == 2 ? nil : [FHIR.CodeableConcept(coding: [coding], text: pick == 1 ? text : nil)]
            var observation = FHIR.Observation(
                id: "id-\(round)", text: pick == 0 ? nil : FHIR.Narrative(["Heart rate", text][pick % 2]), category: category,
                code: FHIR.CodeableConcept(coding: [coding], text: pick == 3 ? text : nil),
                subject: FHIR.Reference(reference: "urn:uuid:abc", display: nil), effectiveDateTime: "2026-01-02T03:04:05Z",
                effectivePeriod: nil, note: nil, device: nil)
            observation.valueString = text
            json.reset()
            json.memoSlot = round % 5 == 4 ? nil : next(3)
            observation.write(to: &json)
            #expect(json.bytes == (try viaEncoder(observation)), "round \(round)")
            #expect(json.referenceValues.count == 1)
            if json.memoSlot != nil { seen += 1 }
        }
        #expect(seen > 300)
    }
}
