import CohortCore
import Foundation

/// Writes the FHIR part of an export: Bulk Data NDJSON (one resource type per file), one
/// collection Bundle per participant streamed entry by entry, and `manifest.json`.
///
/// Used by one thread at a time (the export's FHIR worker, handed over through its lock), hence
/// `@unchecked Sendable`.
final class FHIRWriter: @unchecked Sendable {
    private let directory: URL
    private let bundlesDirectory: URL
    private let mapper: FHIRMapper
    private let encoder: JSONEncoder
    private var bulk: [String: BufferedFileWriter] = [:]
    private var bulkCounts: [String: Int] = [:]
    private var bundle: BufferedFileWriter?
    private var bundleEntries = 0
    private var bundleFiles: [ExportedFile] = []
    private var recordOrdinal = 0
    /// The current participant's Patient id, and its reference in each style.
    private var patientID = ""
    private var bundleReference = Data()
    private var bulkReference = Data()

    init(directory: URL, context: ExportContext) throws {
        self.directory = directory
        bundlesDirectory = directory.appendingPathComponent("bundles", isDirectory: true)
        mapper = FHIRMapper(context: context)
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        try writeBulk(mapper.researchStudy())
    }

    /// Starts a participant: closes the previous Bundle, opens theirs, and writes Patient,
    /// ResearchSubject, Consents and Provenance.
    func begin(_ p: DeidentifiedParticipant, consents: [DeidentifiedConsent]) throws {
        try closeBundle()
        recordOrdinal = 0
        patientID = mapper.patientID(p.pseudonym)
        bundleReference = Data("\"reference\":\"urn:uuid:\(patientID)\"".utf8)
        bulkReference = Data("\"reference\":\"Patient/\(patientID)\"".utf8)
        let name = "bundles/\(p.pseudonym).json"
        let writer = try BufferedFileWriter(url: bundlesDirectory.appendingPathComponent(p.pseudonym + ".json"), relativePath: "data/fhir/" + name)
        try writer.write(
            "{\"resourceType\":\"Bundle\",\"id\":\"\(mapper.bundleID(p.pseudonym))\","
                + "\"meta\":{\"security\":[{\"code\":\"PSEUDED\",\"display\":\"pseudonymized\",\"system\":\"\(FHIR.observationValue)\"}]},"
                + "\"type\":\"collection\",\"timestamp\":\"\(mapper.context.createdAt.iso8601)\",\"entry\":[")
        bundle = writer
        bundleEntries = 0

        try writeEntry(mapper.researchStudy())
        for style in [FHIRMapper.Style.bundle, .bulk] {
            let patient = mapper.patient(p)
            let consentResources = mapper.consents(consents, of: p, style: style)
            let subject = mapper.researchSubject(p, consentIDs: consentResources.map(\.id), consents: consents, style: style)
            let provenance = mapper.provenance(p, style: style)
            let resources: [any FHIRResource] = [patient, subject] + consentResources + [provenance]
            for resource in resources {
                if style == .bundle { try writeEntry(resource) } else { try writeBulk(resource) }
            }
        }
    }

    /// Writes a batch of participants and records, in order.
    func consume(_ events: [ExportEvent]) throws {
        for event in events {
            switch event {
            case .participant(let p, let consents): try begin(p, consents: consents)
            case .record(let r): try write(r)
            }
        }
    }

    /// Writes a record's resource to its NDJSON file and to the current Bundle.
    ///
    /// A record resource's only reference is its subject, so it is built and encoded once and the
    /// NDJSON line is the Bundle entry with `urn:uuid:<patient>` rewritten as `Patient/<patient>`
    /// (the golden files pin that both forms match what building each style separately gives).
    func write(_ r: DeidentifiedRecord) throws {
        let resource = mapper.resource(r, ordinal: recordOrdinal, style: .bundle, patientID: patientID)
        recordOrdinal += 1
        let json = try encode(resource)
        try writeEntry(resource, json: json)
        let bulkJSON = Self.replacing(bundleReference, with: bulkReference, in: json)
        try writeBulk(type: resource.resourceType, json: bulkJSON)
    }

    /// `data` with every occurrence of `pattern` replaced by `replacement`.
    static func replacing(_ pattern: Data, with replacement: Data, in data: Data) -> Data {
        var out = data
        var from = out.startIndex
        while let range = out.range(of: pattern, in: from..<out.endIndex) {
            out.replaceSubrange(range, with: replacement)
            from = range.lowerBound + replacement.count
        }
        return out
    }

    /// Closes every file, writes `manifest.json`, and describes what was written.
    func finish() throws -> [ExportedFile] {
        try closeBundle()
        var files = bundleFiles
        var outputs: [BulkManifest.Output] = []
        for type in bulk.keys.sorted() {
            guard let writer = bulk[type] else { continue }
            try writer.close()
            let count = bulkCounts[type] ?? 0
            files.append(ExportedFile(path: writer.relativePath, rows: count, bytes: writer.bytesWritten))
            outputs.append(BulkManifest.Output(type: type, url: "\(type).ndjson", count: count))
        }
        let manifest = BulkManifest(
            transactionTime: mapper.context.createdAt.iso8601,
            request: "cohort export --formats fhir",
            requiresAccessToken: false, output: outputs, error: [])
        let data = try CanonicalJSON.pretty(manifest) + Data("\n".utf8)
        let writer = try BufferedFileWriter(url: directory.appendingPathComponent("manifest.json"), relativePath: "data/fhir/manifest.json")
        try writer.write(data)
        try writer.close()
        files.append(ExportedFile(path: writer.relativePath, rows: 0, bytes: writer.bytesWritten))
        return files
    }

    private func writeEntry(_ resource: any FHIRResource) throws {
        try writeEntry(resource, json: try encode(resource))
    }

    private func writeEntry(_ resource: any FHIRResource, json: Data) throws {
        guard let bundle else { return }
        try bundle.write(bundleEntries == 0 ? "\n" : ",\n")
        try bundle.write("{\"fullUrl\":\"urn:uuid:\(resource.id)\",\"resource\":")
        try bundle.write(json)
        try bundle.write("}")
        bundleEntries += 1
    }

    private func writeBulk(_ resource: any FHIRResource) throws {
        try writeBulk(type: resource.resourceType, json: try encode(resource))
    }

    private func writeBulk(type: String, json: Data) throws {
        let writer: BufferedFileWriter
        if let existing = bulk[type] {
            writer = existing
        } else {
            writer = try BufferedFileWriter(url: directory.appendingPathComponent(type + ".ndjson"), relativePath: "data/fhir/\(type).ndjson")
            bulk[type] = writer
        }
        try writer.write(json)
        try writer.write("\n")
        bulkCounts[type, default: 0] += 1
    }

    private func encode(_ resource: any FHIRResource) throws -> Data {
        // Record resources (one or two per record) take the fast writer; the rest are few.
        if let writable = resource as? any FHIRJSONWritable {
            var json = FHIRJSON()
            writable.write(to: &json)
            return Data(json.bytes)
        }
        do {
            return try encoder.encode(resource)
        } catch {
            throw CohortError(.system, "cannot encode a FHIR \(resource.resourceType) resource", underlying: String(describing: type(of: error)))
        }
    }

    private func closeBundle() throws {
        guard let bundle else { return }
        try bundle.write("\n]}\n")
        try bundle.close()
        bundleFiles.append(ExportedFile(path: bundle.relativePath, rows: bundleEntries, bytes: bundle.bytesWritten))
        self.bundle = nil
    }
}
