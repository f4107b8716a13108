import CohortCore
import Foundation
import CohortIO

/// Writes the FHIR part of an export, in the context's layout: Bulk Data NDJSON (one resource
/// type per file) with `manifest.json`, and/or one collection Bundle per participant streamed
/// entry by entry; optionally one transaction Bundle per participant as well.
///
/// Used by one thread at a time: the export's FHIR worker runs the jobs that touch it, one after
/// another (see ``SerialWorker``); it is never shared, so it need not be `Sendable`.
final class FHIRWriter {
    private let directory: URL
    private let bundlesDirectory: URL
    private let mapper: FHIRMapper
    private let encoder: JSONEncoder
    private var bulk: [String: BufferedFileWriter] = [:]
    private var bulkCounts: [String: Int] = [:]
    /// The NDJSON files of the record resources, looked up once rather than per record.
    private var observations: BufferedFileWriter?
    private var medicationStatements: BufferedFileWriter?
    private var bundle: BufferedFileWriter?
    private var bundleEntries = 0
    private var transaction: BufferedFileWriter?
    private var transactionEntries = 0
    private let layout: FHIRLayout
    private let taps: FileWriteTaps?
    private let writesTransactions: Bool
    private var bundleFiles: [ExportedFile] = []
    private var recordOrdinal = 0
    /// The current participant's Patient id, and its reference in each style (the reference's
    /// JSON string, quotes included).
    private var patientID = ""
    private var bundleSubject = FHIR.Reference()
    private var bundleReference: [UInt8] = []
    private var bulkReference: [UInt8] = []
    /// Reused per record: the id builder, the resource's JSON, and its NDJSON line.
    private let ids = ResourceID.Builder()
    private var json = FHIRJSON(capacity: 4096)
    private var line: [UInt8] = []
    /// Writes the records' Observations without the model (``ObservationBytes``), and the rows
    /// it wrote to `Observation.ndjson` (added to ``bulkCounts`` at the end).
    private var observationBytes = ObservationBytes()
    private var observationRows = 0

    init(directory: URL, context: ExportContext, taps: FileWriteTaps? = nil) throws {
        self.directory = directory
        self.taps = taps
        bundlesDirectory = directory.appendingPathComponent("bundles", isDirectory: true)
        mapper = FHIRMapper(context: context)
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        layout = context.fhirLayout
        writesTransactions = context.fhirTransactions
        if layout.writesBulk { try writeBulk(mapper.researchStudy()) }
    }

    /// Starts a participant: closes the previous Bundles, opens theirs, and writes Patient,
    /// ResearchSubject, Consents and Provenance.
    func begin(_ p: DeidentifiedParticipant, consents: [DeidentifiedConsent]) throws {
        try closeBundle()
        recordOrdinal = 0
        patientID = mapper.patientID(p.pseudonym)
        bundleSubject = mapper.reference("Patient", patientID, .bundle)
        bundleReference = Array("\"urn:uuid:\(patientID)\"".utf8)
        bulkReference = Array("\"Patient/\(patientID)\"".utf8)
        observationBytes.begin(studyID: mapper.studyID, pseudonym: p.pseudonym)
        let security = "\"meta\":{\"security\":[{\"code\":\"PSEUDED\",\"display\":\"pseudonymized\",\"system\":\"\(FHIR.observationValue)\"}]},"
        if layout.writesBundles {
            let name = "bundles/\(p.pseudonym).json"
            let writer = try BufferedFileWriter(url: bundlesDirectory.appendingPathComponent(p.pseudonym + ".json"), relativePath: "data/fhir/" + name, taps: taps)
            try writer.write(
                "{\"resourceType\":\"Bundle\",\"id\":\"\(mapper.bundleID(p.pseudonym))\"," + security
                    + "\"type\":\"collection\",\"timestamp\":\"\(mapper.context.createdAt.iso8601)\",\"entry\":[")
            bundle = writer
            bundleEntries = 0
        }
        if writesTransactions {
            // Every entry is a PUT of the resource at its own id, so loading the Bundle twice
            // (or the same study's ResearchStudy from every participant) updates, never duplicates.
            let name = "bundles/\(p.pseudonym).transaction.json"
            let writer = try BufferedFileWriter(
                url: bundlesDirectory.appendingPathComponent(p.pseudonym + ".transaction.json"), relativePath: "data/fhir/" + name, taps: taps)
            try writer.write(
                "{\"resourceType\":\"Bundle\",\"id\":\"\(mapper.transactionBundleID(p.pseudonym))\"," + security
                    + "\"type\":\"transaction\",\"entry\":[")
            transaction = writer
            transactionEntries = 0
        }

        try writeEntry(mapper.researchStudy())
        var styles: [FHIRMapper.Style] = []
        if bundle != nil || transaction != nil { styles.append(.bundle) }
        if layout.writesBulk { styles.append(.bulk) }
        for style in styles {
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
    func consume(_ batch: ExportBatch) throws {
        for event in batch.events {
            switch event {
            case .participant(let p, let consents): try begin(p, consents: consents)
            case .records(let run): for index in run { try write(batch.records[index]) }
            case .dailyTotal(let r):
                if let kind = ObservationBytes.dailyTotals[r.kind] {
                    try writeObservation(r, kind: kind)
                } else {
                    try write(resource: mapper.dailyTotal(r, ordinal: recordOrdinal, subject: bundleSubject, ids: ids), slot: nil)
                }
            }
        }
    }

    /// Writes a record's resource to its NDJSON file and to the current Bundle: an Observation
    /// straight from the record (``ObservationBytes``), a MedicationStatement through the model.
    ///
    /// A record resource's only reference is its subject, so it is built and encoded once and the
    /// NDJSON line is the Bundle entry with `urn:uuid:<patient>` rewritten as `Patient/<patient>`
    /// (the golden files pin that both forms match what building each style separately gives).
    func write(_ r: DeidentifiedRecord) throws {
        if let kind = ObservationBytes.kinds[r.kind] { return try writeObservation(r, kind: kind) }
        try write(resource: mapper.resource(r, ordinal: recordOrdinal, subject: bundleSubject, ids: ids), slot: FHIRMapper.kindParts[r.kind]?.slot)
    }

    /// Writes a record's (or a daily total's) Observation with ``ObservationBytes``: with the Bundle's subject when
    /// a Bundle takes it (the NDJSON line then has the bulk subject spliced in), else straight
    /// with the bulk subject, the line's newline included.
    private func writeObservation(_ r: DeidentifiedRecord, kind: ObservationBytes.Kind) throws {
        let entries = bundle != nil || transaction != nil
        var line: [UInt8] = []
        swap(&line, &self.line)
        defer { swap(&line, &self.line) }
        line.removeAll(keepingCapacity: true)
        let written = observationBytes.write(
            r, kind: kind, ordinal: recordOrdinal, subject: entries ? bundleReference : bulkReference, ids: ids, to: &line)
        recordOrdinal += 1
        try line.withUnsafeBytes { bytes in
            if entries { try writeEntry(type: "Observation", id: UnsafeRawBufferPointer(rebasing: bytes[written.id]), json: bytes) }
        }
        guard layout.writesBulk else { return }
        if observations == nil { observations = try bulkWriter("Observation") }
        guard let file = observations else { return }
        if entries {
            try line.withUnsafeBytes { bytes in
                try file.write(UnsafeRawBufferPointer(rebasing: bytes[..<written.subject.lowerBound]))
                try file.write(bulkReference)
                try file.write(UnsafeRawBufferPointer(rebasing: bytes[written.subject.upperBound...]))
            }
            try file.write("\n" as StaticString)
        } else {
            line.append(UInt8(ascii: "\n"))
            try file.write(line)
        }
        observationRows += 1
    }

    /// Writes a built record resource (a record's, or a daily total's) to its NDJSON file and the
    /// current Bundle. `slot`: its kind's ``FHIRMapper/KindParts/slot`` when its category, code
    /// and narrative are its kind's (a record's), so their JSON is memoized (``FHIRJSON/memoSlot``).
    private func write(resource: FHIRMapper.RecordResource, slot: Int?) throws {
        recordOrdinal += 1
        // The reused buffers move into locals for the record (no exclusivity check per append).
        var json = FHIRJSON(capacity: 0)
        var line: [UInt8] = []
        swap(&json, &self.json)
        swap(&line, &self.line)
        defer {
            swap(&json, &self.json)
            swap(&line, &self.line)
        }
        json.reset()
        json.memoSlot = slot
        resource.write(to: &json)
        let type: String
        switch resource {
        case .observation: type = "Observation"
        case .medicationStatement: type = "MedicationStatement"
        }
        try writeEntry(type: type, id: resource.id, json: json.bytes)
        guard layout.writesBulk else { return }

        Self.rewriteReferences(in: json, from: bundleReference, to: bulkReference, into: &line)
        line.append(UInt8(ascii: "\n"))
        let writer: BufferedFileWriter
        switch resource {
        case .observation:
            if observations == nil { observations = try bulkWriter("Observation") }
            guard let file = observations else { return }
            writer = file
        case .medicationStatement:
            if medicationStatements == nil { medicationStatements = try bulkWriter("MedicationStatement") }
            guard let file = medicationStatements else { return }
            writer = file
        }
        try writer.write(line)
        bulkCounts[type, default: 0] += 1
    }

    private static let firstEntry: StaticString = "\n{\"fullUrl\":\"urn:uuid:"
    private static let nextEntry: StaticString = ",\n{\"fullUrl\":\"urn:uuid:"
    private static let entryResource: StaticString = "\",\"resource\":"
    private static let entryEnd: StaticString = "}"
    private static let requestPut: StaticString = ",\"request\":{\"method\":\"PUT\",\"url\":\""
    private static let requestEnd: StaticString = "\"}}"

    /// `json`'s bytes, with every reference whose value (as JSON string bytes) is `from`
    /// rewritten as `to`, into `out` (emptied first, its capacity kept).
    static func rewriteReferences(in json: FHIRJSON, from: [UInt8], to: [UInt8], into out: inout [UInt8]) {
        out.removeAll(keepingCapacity: true)
        json.bytes.withUnsafeBufferPointer { bytes in
            var copied = 0
            for range in json.referenceValues where bytes[range].elementsEqual(from) {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied..<range.lowerBound]))
                out.append(contentsOf: to)
                copied = range.upperBound
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied...]))
        }
    }

    /// Closes every file, writes `manifest.json` (with the Bulk layout), and describes what was
    /// written.
    func finish() throws -> [ExportedFile] {
        try closeBundle()
        var files = bundleFiles
        guard layout.writesBulk else { return files }
        var outputs: [BulkManifest.Output] = []
        for type in bulk.keys.sorted() {
            guard let writer = bulk[type] else { continue }
            try writer.close()
            let count = (bulkCounts[type] ?? 0) + (type == "Observation" ? observationRows : 0)
            files.append(ExportedFile(path: writer.relativePath, rows: count, bytes: writer.bytesWritten))
            outputs.append(BulkManifest.Output(type: type, url: "\(type).ndjson", count: count))
        }
        let manifest = BulkManifest(
            transactionTime: mapper.context.createdAt.iso8601,
            request: "cohort export --outputs fhir",
            requiresAccessToken: false, output: outputs, error: [])
        let data = try CanonicalJSON.pretty(manifest) + Data("\n".utf8)
        let writer = try BufferedFileWriter(url: directory.appendingPathComponent("manifest.json"), relativePath: "data/fhir/manifest.json", taps: taps)
        try writer.write(data)
        try writer.close()
        files.append(ExportedFile(path: writer.relativePath, rows: 0, bytes: writer.bytesWritten))
        return files
    }

    private func writeEntry(_ resource: any FHIRResource) throws {
        guard bundle != nil || transaction != nil else { return }
        try writeEntry(type: resource.resourceType, id: resource.id, json: [UInt8](try encode(resource)))
    }

    /// Appends one entry (`fullUrl` from `id`, then the resource's JSON) to the current collection
    /// Bundle, and with its PUT request to the current transaction Bundle.
    private func writeEntry(type: String, id: String, json: [UInt8]) throws {
        var id = id
        try id.withUTF8 { id in
            try json.withUnsafeBytes { json in try writeEntry(type: type, id: UnsafeRawBufferPointer(id), json: json) }
        }
    }

    /// ``writeEntry(type:id:json:)-(String,String,[UInt8])`` with the id's and the JSON's bytes.
    private func writeEntry(type: String, id: UnsafeRawBufferPointer, json: UnsafeRawBufferPointer) throws {
        if let bundle {
            try bundle.write(bundleEntries == 0 ? Self.firstEntry : Self.nextEntry)
            try bundle.write(id)
            try bundle.write(Self.entryResource)
            try bundle.write(json)
            try bundle.write(Self.entryEnd)
            bundleEntries += 1
        }
        if let transaction {
            try transaction.write(transactionEntries == 0 ? Self.firstEntry : Self.nextEntry)
            try transaction.write(id)
            try transaction.write(Self.entryResource)
            try transaction.write(json)
            try transaction.write(Self.requestPut)
            try transaction.write(type)
            try transaction.write("/")
            try transaction.write(id)
            try transaction.write(Self.requestEnd)
            transactionEntries += 1
        }
    }

    private func writeBulk(_ resource: any FHIRResource) throws {
        try writeBulk(type: resource.resourceType, json: try encode(resource))
    }

    private func writeBulk(type: String, json: Data) throws {
        let writer = try bulkWriter(type)
        try writer.write(json)
        try writer.write("\n")
        bulkCounts[type, default: 0] += 1
    }

    /// The NDJSON file for resources of `type`, opened on first use.
    private func bulkWriter(_ type: String) throws -> BufferedFileWriter {
        if let existing = bulk[type] { return existing }
        let writer = try BufferedFileWriter(url: directory.appendingPathComponent(type + ".ndjson"), relativePath: "data/fhir/\(type).ndjson", taps: taps)
        bulk[type] = writer
        return writer
    }

    private func encode(_ resource: any FHIRResource) throws -> Data {
        do {
            return try encoder.encode(resource)
        } catch {
            throw CohortError(.system, "cannot encode a FHIR \(resource.resourceType) resource", underlying: String(describing: type(of: error)))
        }
    }

    private func closeBundle() throws {
        if let bundle {
            try bundle.write("\n]}\n")
            try bundle.close()
            bundleFiles.append(ExportedFile(path: bundle.relativePath, rows: bundleEntries, bytes: bundle.bytesWritten))
            self.bundle = nil
        }
        if let transaction {
            try transaction.write("\n]}\n")
            try transaction.close()
            bundleFiles.append(ExportedFile(path: transaction.relativePath, rows: transactionEntries, bytes: transaction.bytesWritten))
            self.transaction = nil
        }
    }
}
