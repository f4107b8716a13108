import CohortCore
import Foundation
import Testing

@testable import CohortExport

struct ObservationBytesTests {
    /// A deterministic generator, so a failure names a round that can be replayed.
    private struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        mutating func pick<T>(_ values: [T]) -> T { values[next(values.count)] }
    }

    static let texts = FHIRJSONTests.texts + ["running", " a ; ;b;", ";", "  ", "x;y", "trigger one; trigger two ;\tthree"]
    static let values: [Double?] = [
        nil, 0, -0.0, 72, -3, 1013.25, 0.001, 1e-20, 1e20, 123_456_789_012_345, 999_999_999_999_999.0, .nan, .infinity, 36.6, 1.0 / 3.0,
    ]

    private static func record(_ g: inout Generator, kinds: [RecordKind]) -> DeidentifiedRecord {
        var r = DeidentifiedRecord(pseudonym: "K7QF2M4XRB6TNV3D", kind: g.pick(kinds))
        func instant(_ g: inout Generator) -> Timestamp {
            Timestamp(
                epochMilliseconds: 1_700_000_000_000 + Int64(g.next(100_000_000) * g.pick([1, 1000])), utcOffsetSeconds: g.pick([0, 3600, -19_800, 20_700]))
        }
        r.start = g.next(10) == 0 ? nil : instant(&g)
        r.end = g.next(2) == 0 ? nil : instant(&g)
        r.value = g.next(3) == 0 ? Double(g.next(100_000)) / 100 : g.pick(values)
        r.valueLabel = g.next(3) == 0 ? g.pick(texts) : g.pick([nil, ""])
        r.text = g.next(2) == 0 ? g.pick(texts) : g.pick([nil, ""])
        r.source = g.next(2) == 0 ? g.pick(texts) : g.pick([nil, ""])
        r.note = g.next(3) == 0 ? g.pick(texts) : g.pick([nil, ""])
        return r
    }

    /// Record after record of one participant, in both subject styles, the Observation written
    /// from the record (or daily total) gives the bytes of the model written with ``FHIRJSON``
    /// (the route the writer took before, memo slots included), and says where its id and
    /// subject are.
    @Test(arguments: [(1, false), (2, false), (3, false), (4, true), (5, true)] as [(UInt64, Bool)])
    func bytesMatchTheModelsJSON(seed: UInt64, dailyTotal: Bool) throws {
        let mapper = FHIRMapper(context: ExportFixture.context())
        let kinds = RecordKind.allCases.filter { $0 != .medicationDose }
        #expect(Set(ObservationBytes.kinds.keys) == Set(kinds))
        #expect(Set(ObservationBytes.dailyTotals.keys) == Set(kinds))
        var g = Generator(state: seed)
        var fast = ObservationBytes()
        fast.begin(studyID: mapper.studyID, pseudonym: "K7QF2M4XRB6TNV3D")
        let patient = mapper.patientID("K7QF2M4XRB6TNV3D")
        let modelIDs = ResourceID.Builder(), fastIDs = ResourceID.Builder()
        var json = FHIRJSON()
        var out: [UInt8] = [9]
        for ordinal in 0..<3000 {
            let r = Self.record(&g, kinds: kinds)
            let reference = ordinal % 2 == 0 ? "urn:uuid:\(patient)" : "Patient/\(patient)"
            let model =
                dailyTotal
                ? mapper.dailyTotal(r, ordinal: ordinal, subject: FHIR.Reference(reference: reference), ids: modelIDs)
                : mapper.resource(r, ordinal: ordinal, subject: FHIR.Reference(reference: reference), ids: modelIDs)
            json.reset()
            json.memoSlot = dailyTotal ? nil : FHIRMapper.kindParts[r.kind]?.slot
            model.write(to: &json)
            let kind = try #require((dailyTotal ? ObservationBytes.dailyTotals : ObservationBytes.kinds)[r.kind])
            let subject = Array(JSONText.string(reference).utf8)
            out.removeAll(keepingCapacity: true)
            let written = fast.write(r, kind: kind, ordinal: ordinal, subject: subject, ids: fastIDs, to: &out)
            if out != json.bytes {  // as text, so a failure reads as JSON rather than bytes
                Issue.record("seed \(seed) record \(ordinal):\n\(String(decoding: out, as: UTF8.self))\nexpected\n\(String(decoding: json.bytes, as: UTF8.self))")
            }
            #expect(String(decoding: out[written.id], as: UTF8.self) == model.id)
            #expect(Array(out[written.subject]) == subject)
        }
    }

    /// Numbers: the digits of a whole value, else `FHIR.numberText`.
    @Test(arguments: values)
    func numbersAreTheModelsText(value: Double?) {
        guard let value else { return }
        var bytes: [UInt8] = []
        ObservationBytes.appendNumber(value, to: &bytes)
        #expect(bytes == Array((FHIR.numberText(value) ?? "").utf8))
    }
}
