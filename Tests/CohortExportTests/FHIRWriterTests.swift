import CohortCore
import Foundation
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

/// The FHIR layouts (`--fhir bulk|bundles|both`) and the transaction Bundles.
struct FHIRLayoutTests {
    static func json(_ url: URL) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    /// "Type/id" of every resource in the NDJSON files, with repeats.
    static func bulkResources(_ fhir: URL) throws -> [String] {
        var keys: [String] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: fhir.path).sorted() where name.hasSuffix(".ndjson") {
            for line in String(decoding: try Data(contentsOf: fhir.appendingPathComponent(name)), as: UTF8.self).split(separator: "\n") {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                keys.append("\(object["resourceType"] ?? "")/\(object["id"] ?? "")")
            }
        }
        return keys
    }

    /// Bundle file name → its entries' resources.
    static func bundles(_ fhir: URL) throws -> [String: [[String: Any]]] {
        let folder = fhir.appendingPathComponent("bundles")
        guard FileManager.default.fileExists(atPath: folder.path) else { return [:] }
        var result: [String: [[String: Any]]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            let bundle = try json(folder.appendingPathComponent(name))
            result[name] = try #require(bundle["entry"] as? [[String: Any]])
        }
        return result
    }

    /// The default layout writes every resource exactly once: NDJSON and its manifest, no Bundles.
    @Test(.enabled(if: ExportWriterTests.interopOrCI, ExportWriterTests.interopReason)) func bulkLayoutWritesEachResourceOnce() throws {
        let root = try ExportFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let files = try ExportFixture.export(to: root, context: ExportFixture.context(fhirLayout: .bulk))
        let fhir = root.appendingPathComponent("data/fhir")
        let keys = try Self.bulkResources(fhir)
        #expect(keys.count == Set(keys).count)
        #expect(keys.count > 10)
        #expect(!FileManager.default.fileExists(atPath: fhir.appendingPathComponent("bundles").path))
        #expect(FileManager.default.fileExists(atPath: fhir.appendingPathComponent("manifest.json").path))
        #expect(!files.contains { $0.path.contains("/bundles/") })
        let result = try ExportWriterTests.runInterop("check_fhir.py", on: root.appendingPathComponent("data"))
        #expect(result.status == 0, "\(result.output)")
    }

    /// The Bundles layout holds the same resources as the Bulk one (the ResearchStudy repeated in
    /// each Bundle so references resolve), and no NDJSON or manifest.
    @Test(.enabled(if: ExportWriterTests.interopOrCI, ExportWriterTests.interopReason)) func bundlesLayoutHoldsTheSameResourcesAsBulk() throws {
        let bulkRoot = try ExportFixture.temporaryDirectory(), bundlesRoot = try ExportFixture.temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(at: bulkRoot)
            try? FileManager.default.removeItem(at: bundlesRoot)
        }
        try ExportFixture.export(to: bulkRoot, context: ExportFixture.context(fhirLayout: .bulk))
        try ExportFixture.export(to: bundlesRoot, context: ExportFixture.context(fhirLayout: .bundles))
        let fhir = bundlesRoot.appendingPathComponent("data/fhir")
        #expect(try Self.bulkResources(fhir).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: fhir.appendingPathComponent("manifest.json").path))
        var inBundles = Set<String>()
        let bundles = try Self.bundles(fhir)
        #expect(bundles.count == 2)
        for entries in bundles.values {
            for entry in entries {
                let resource = try #require(entry["resource"] as? [String: Any])
                inBundles.insert("\(resource["resourceType"] ?? "")/\(resource["id"] ?? "")")
            }
        }
        #expect(inBundles == Set(try Self.bulkResources(bulkRoot.appendingPathComponent("data/fhir"))))
        let result = try ExportWriterTests.runInterop("check_fhir.py", on: bundlesRoot.appendingPathComponent("data"))
        #expect(result.status == 0, "\(result.output)")
    }

    /// `--fhir-transaction`: one transaction Bundle per participant whose every entry PUTs its
    /// resource at `Type/<id>`, so a FHIR server loads it with references resolved, and loading
    /// it again updates rather than duplicates. The FHIR validators accept it.
    @Test(.enabled(if: ExportWriterTests.interopOrCI, ExportWriterTests.interopReason)) func transactionBundlesPutEveryResourceAtItsId() throws {
        let root = try ExportFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let files = try ExportFixture.export(to: root, context: ExportFixture.context(fhirLayout: .bulk, fhirTransactions: true))
        let fhir = root.appendingPathComponent("data/fhir")
        let bundles = try Self.bundles(fhir)
        #expect(Set(bundles.keys) == ["K7QF2M4XRB6TNV3D.transaction.json", "W3HZ7P5LCA2YUE7G.transaction.json"])
        let bundle = try Self.json(fhir.appendingPathComponent("bundles/K7QF2M4XRB6TNV3D.transaction.json"))
        #expect(bundle["type"] as? String == "transaction")
        let entries = try #require(bundles["K7QF2M4XRB6TNV3D.transaction.json"])
        var urls = Set<String>()
        for entry in entries {
            let resource = try #require(entry["resource"] as? [String: Any])
            let request = try #require(entry["request"] as? [String: Any])
            let type = try #require(resource["resourceType"] as? String), id = try #require(resource["id"] as? String)
            #expect(request["method"] as? String == "PUT")
            #expect(request["url"] as? String == "\(type)/\(id)")
            #expect(entry["fullUrl"] as? String == "urn:uuid:\(id)")
            urls.insert("\(type)/\(id)")
        }
        #expect(urls.isSubset(of: Set(try Self.bulkResources(fhir))))
        #expect(urls.contains { $0.hasPrefix("Patient/") } && urls.contains { $0.hasPrefix("Observation/") })
        #expect(files.first { $0.path == "data/fhir/bundles/K7QF2M4XRB6TNV3D.transaction.json" }?.rows == entries.count)
        let result = try ExportWriterTests.runInterop("check_fhir.py", on: root.appendingPathComponent("data"))
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("transaction-bundles 2"), "\(result.output)")
    }
}
