public import CohortCore
public import Foundation
package import CohortIO

/// Lays out the `data/` part of an export bag from a stream of de-identified rows:
/// `csv/` (tables, codebook, datapackage.json), `json/` (NDJSON tables, study.json) and `fhir/`
/// (Bulk Data NDJSON, manifest.json, one collection Bundle per participant).
///
/// Call `beginParticipant` for each participant, then `write` for each of that participant's
/// records, then `finish` once. Memory stays flat: rows go straight to 64 KiB-buffered files and
/// a participant's Bundle is streamed to its file entry by entry.
///
/// Both cores are used: arguments are checked on the caller's thread, then rows travel in small
/// batches to two worker threads — one writes the CSV and NDJSON tables, the other the FHIR
/// files — each in arrival order, so the output is the same as writing them one after the other.
/// A worker's error comes back from the next call.
public final class ExportWriter {
    private let context: ExportContext
    private let dataDirectory: URL
    private let csvDirectory: URL?
    private let jsonDirectory: URL?
    private let layouts: [TableLayout]
    private let participants: TableWriter?
    private let consents: TableWriter?
    private let families: [DataType: TableWriter]
    private let fhir: FHIRWriter?
    private let tableSink: TableSink?
    private let tableWorker: SerialWorker?
    private let fhirWorker: SerialWorker?
    private var pending = ExportBatch()
    /// Records and events per batch handed to the workers, and batches each worker may have
    /// queued before ``flush()`` waits. Every hand-over that finds a queue full or empty puts a
    /// thread to sleep and wakes another; on a two-core virtual machine a wake-up takes tens of
    /// microseconds, in which a core can go idle. 256 a batch and 4 queued made about 3,500
    /// hand-overs at bench M and left the cores 91–93 % busy while the write stage ran; 512 and 8
    /// (with the scan's and the spool's deeper queues, issue 28's sixteenth round) halve the
    /// threads' sleeps. A queued batch holds its records (about 0.1 MB at 512).
    private static let batchSize = 512
    private static let queuedBatches = 8
    private var current: String?
    /// Pseudonyms already begun: a second beginParticipant would overwrite their Bundle.
    private var seen: Set<String> = []
    private var finished = false
    /// `daily_totals` (CSV/NDJSON), when the protocol has kinds to total; written on the table worker.
    private let dailyTotals: TableWriter?
    /// Per kind (by ``RecordKind/caseIndex``): whether the protocol collects it, and whether it is
    /// one whose daily totals are written. Read per record without hashing the kind or searching
    /// the protocol's lists (issue 28, ninth round).
    private let kindChecks: [(collected: Bool, totalled: Bool)]
    /// The current participant's samples per cumulative kind, and their published UTC offset.
    private var totals: [RecordKind: DailyTotals] = [:]
    private var totalsOffset: Int32 = 0
    private let taps: FileWriteTaps?

    /// Creates the folders for the chosen formats under `dataDirectory` (the bag's `data/`) and
    /// opens every table file with its header.
    ///
    /// - Throws: `CohortError` (`system`) naming the folder or file that could not be created.
    public convenience init(dataDirectory: URL, context: ExportContext) throws {
        try self.init(dataDirectory: dataDirectory, context: context, taps: nil)
    }

    /// ``init(dataDirectory:context:)`` with every file it writes seen by `taps` (the bag's
    /// digests computed as the files are written).
    package init(dataDirectory: URL, context: ExportContext, taps: FileWriteTaps?) throws {
        self.context = context
        self.taps = taps
        self.dataDirectory = dataDirectory
        let formats = context.formats
        func folder(_ name: String, _ wanted: Bool) throws -> URL? {
            guard wanted else { return nil }
            let url = dataDirectory.appendingPathComponent(name, isDirectory: true)
            do {
                try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            } catch {
                throw CohortError(
                    .system, "cannot create export folder", at: .init(file: "data/\(name)"),
                    hint: "check that the export directory is writable", underlying: (error as NSError).localizedDescription)
            }
            return url
        }
        csvDirectory = try folder("csv", formats.contains(.csv))
        jsonDirectory = try folder("json", formats.contains(.json))
        let fhirDirectory = try folder("fhir", formats.contains(.fhir))
        _ = try folder("fhir/bundles", formats.contains(.fhir) && (context.fhirLayout.writesBundles || context.fhirTransactions))

        let policy = context.studyProtocol.deidentification
        var layouts = [TableLayout.participants(policy: policy), TableLayout.consents(policy: policy, scopes: context.studyProtocol.consent.allSharingScopes.keys.sorted())]
        for type in context.studyProtocol.dataTypes.keys.sorted() {
            layouts.append(
                TableLayout.family(
                    type, kinds: context.studyProtocol.dataTypes[type] ?? [], policy: policy,
                    keptMetadata: context.studyProtocol.importSettings.appleHealthKeepMetadata))
        }
        let tabular = csvDirectory != nil || jsonDirectory != nil
        let totalsLayout = tabular ? TableLayout.dailyTotals(context.studyProtocol) : nil
        if let totalsLayout { layouts.append(totalsLayout) }
        let csvFolder = csvDirectory, jsonFolder = jsonDirectory
        dailyTotals = try totalsLayout.map { try TableWriter(layout: $0, csvDirectory: csvFolder, jsonDirectory: jsonFolder, taps: taps) }
        let totalled = tabular || formats.contains(.fhir) ? Set(TableLayout.dailyTotalKinds(context.studyProtocol)) : []
        kindChecks = RecordKind.allCases.map { (context.studyProtocol.collects($0), totalled.contains($0)) }
        self.layouts = layouts
        if tabular {
            var writers: [TableWriter] = []
            for layout in layouts where layout.name != "daily_totals" {
                writers.append(try TableWriter(layout: layout, csvDirectory: csvDirectory, jsonDirectory: jsonDirectory, taps: taps))
            }
            participants = writers[0]
            consents = writers[1]
            var families: [DataType: TableWriter] = [:]
            for writer in writers.dropFirst(2) {
                if let type = writer.layout.dataType { families[type] = writer }
            }
            self.families = families
        } else {
            participants = nil
            consents = nil
            families = [:]
        }
        fhir = try fhirDirectory.map { try FHIRWriter(directory: $0, context: context, taps: taps) }
        if let participants, let consents {
            tableSink = TableSink(participants: participants, consents: consents, families: families)
            tableWorker = SerialWorker(name: "cohort-export-tables", limit: Self.queuedBatches)
        } else {
            tableSink = nil
            tableWorker = nil
        }
        fhirWorker = fhir.map { _ in SerialWorker(name: "cohort-export-fhir", limit: Self.queuedBatches) }
    }

    deinit {
        tableWorker?.cancel()
        fhirWorker?.cancel()
    }

    /// Starts a participant: writes their participants row, their consent rows, and (FHIR) opens
    /// their Bundle with Patient, ResearchSubject, Consent and Provenance.
    ///
    /// - Throws: `CohortError` (`invalidInput`) when a consent belongs to someone else or the
    ///   pseudonym cannot name a file; (`conflict`) when the participant was already begun;
    ///   (`system`) when a file cannot be written.
    public func beginParticipant(_ p: DeidentifiedParticipant, consents: [DeidentifiedConsent]) throws {
        try checkOpen()
        guard !p.pseudonym.isEmpty, p.pseudonym.utf8.allSatisfy({ Self.isFileNameSafe($0) }) else {
            throw CohortError(
                .invalidInput, "a pseudonym contains characters that cannot be used in a file name", at: .init(field: "pseudonym"),
                hint: "pseudonyms are base32 text; check the de-identification step")
        }
        guard consents.allSatisfy({ $0.pseudonym == p.pseudonym }) else {
            throw CohortError(
                .invalidInput, "a consent row was passed with another participant", at: .init(field: "pseudonym"),
                hint: "pass each participant's own consents to beginParticipant")
        }
        guard seen.insert(p.pseudonym).inserted else {
            throw CohortError(
                .conflict, "a participant was started twice in one export", at: .init(field: "pseudonym"),
                hint: "stream each participant once, with all of their records grouped after beginParticipant")
        }
        try writeDailyTotals()
        current = p.pseudonym
        // Oldest first; a consent without a published signing (past the embargo horizon) is later
        // than every dated one (`cohort verify` relies on it).
        let ordered = consents.sorted { ($0.signedAt?.epochMilliseconds ?? .max) < ($1.signedAt?.epochMilliseconds ?? .max) }
        try enqueue(.participant(p, ordered))
    }

    /// Writes one record of the current participant to its family table and FHIR resources, and
    /// adds it to the participant's daily totals when its kind is cumulative. `rankingSource`:
    /// the record's source before de-identification, used only to rank overlapping sources for
    /// the daily totals (the protocol's `source_priority` names stored sources; it is never
    /// written); nil = the published source.
    ///
    /// - Throws: `CohortError` (`invalidInput`) when the record does not belong to the current
    ///   participant or its kind is not collected by the protocol.
    public func write(_ r: consuming DeidentifiedRecord, rankingSource: String? = nil) throws {
        try checkOpen()
        guard let current, r.pseudonym == current else {
            throw CohortError(
                .invalidInput, "a record arrived outside its participant's group", at: .init(field: "pseudonym"),
                hint: "call beginParticipant before writing that participant's records, and group records by participant")
        }
        let checks = kindChecks[r.kind.caseIndex]
        guard checks.collected else {
            throw CohortError(
                .invalidInput, "a record of kind \(r.kind.rawValue) is not collected by the protocol", at: .init(field: "kind"),
                hint: "records of kinds the protocol does not list cannot be exported")
        }
        if checks.totalled, let value = r.value, let start = r.start {
            totals[r.kind, default: DailyTotals(priority: context.studyProtocol.sourcePriority)].add(
                start: start, end: r.end, value: value, source: rankingSource ?? r.source)
            totalsOffset = start.utcOffsetSeconds
        }
        // Moved into the batch: a caller that hands over its row is spared a copy of its strings.
        pending.append(record: r)
        if pending.count >= Self.batchSize { try flush() }
    }

    /// Hands the current participant's daily totals to the table worker (`daily_totals`) and the
    /// FHIR writer (one Observation per day and kind), after their records.
    private func writeDailyTotals() throws {
        defer { totals = [:] }
        guard let current, !totals.isEmpty else { return }
        // Days at the participant's published offset: the day a reader of the published start sees.
        let zone = TimeZone(secondsFromGMT: Int(totalsOffset)) ?? TimeZone.gmt
        var rows: [[Cell]] = []
        var observations = ExportBatch()
        for kind in totals.keys.sorted() {
            for total in totals[kind]?.totals(in: zone) ?? [] {
                let value = (total.value * 1000).rounded() / 1000
                rows.append([.string(current), .string(kind.rawValue), .date(total.day), .number(value), .string(kind.canonicalUnit), .integer(total.samplesCounted)])
                var day = DeidentifiedRecord(pseudonym: current, kind: kind)
                let midnight = Int64(total.day.daysSinceEpoch) * 86_400_000 - Int64(totalsOffset) * 1000
                day.start = Timestamp(epochMilliseconds: midnight, utcOffsetSeconds: totalsOffset)
                day.end = Timestamp(epochMilliseconds: midnight + 86_400_000, utcOffsetSeconds: totalsOffset)
                day.value = value
                day.unit = kind.canonicalUnit
                observations.append(.dailyTotal(day))
            }
        }
        try flush()
        if let tableWorker, let dailyTotals { try tableWorker.submit { for row in rows { try dailyTotals.write(row) } } }
        if let fhirWorker, let fhir { try fhirWorker.submit { try fhir.consume(observations) } }
    }

    private func enqueue(_ event: ExportEvent) throws {
        pending.append(event)
        if pending.count >= Self.batchSize { try flush() }
    }

    /// Hands the pending batch to both workers.
    private func flush() throws {
        guard pending.count > 0 else { return }
        let batch = pending
        pending.removeAll()
        if let tableWorker, let tableSink { try tableWorker.submit { try tableSink.consume(batch) } }
        if let fhirWorker, let fhir { try fhirWorker.submit { try fhir.consume(batch) } }
    }

    /// Writes the codebook, `datapackage.json`, `study.json` and the FHIR `manifest.json`, closes
    /// every file, and returns what was written (paths relative to the bag root, sorted).
    ///
    /// - Parameter deidentificationSummary: counts from the de-identifier (rule → rows), copied
    ///   into `study.json`.
    public func finish(deidentificationSummary: [String: Int]?) throws -> [ExportedFile] {
        try checkOpen()
        try writeDailyTotals()
        finished = true
        try flush()
        try tableWorker?.finish()
        try fhirWorker?.finish()
        var files: [ExportedFile] = []
        var tableRows: [String: Int] = [:]
        for writer in [participants, consents].compactMap({ $0 }) + families.values.sorted(by: { $0.layout.name < $1.layout.name }) + [dailyTotals].compactMap({ $0 }) {
            files += try writer.finish()
            tableRows[writer.layout.name] = writer.rows
        }
        if let csvDirectory {
            let codebook = try BufferedFileWriter(url: csvDirectory.appendingPathComponent("codebook.csv"), relativePath: "data/csv/codebook.csv", taps: taps)
            try codebook.write(CSVText.record(Codebook.header))
            let rows = Codebook.rows(layouts: layouts)
            for row in rows { try codebook.write(CSVText.record(row)) }
            try codebook.close()
            files.append(ExportedFile(path: codebook.relativePath, rows: 0, bytes: codebook.bytesWritten))
            files.append(try writeJSON(DataPackage(context: context, layouts: layouts), to: csvDirectory, name: "datapackage.json", folder: "csv"))
        }
        if let jsonDirectory {
            let study = context.studyProtocol
            let summary = StudySummary(
                study: .init(id: study.id, title: study.title, institution: study.institution), protocolRevision: study.revision,
                protocolSHA256: context.protocolSHA256, policySHA256: context.policySHA256, exportedAt: context.createdAt.iso8601,
                recipient: context.recipient, toolVersion: context.toolVersion, formats: context.formats.map(\.rawValue).sorted(),
                deidentification: deidentificationSummary, tables: tableRows, exclusions: context.exclusions)
            files.append(try writeJSON(summary, to: jsonDirectory, name: "study.json", folder: "json"))
        }
        if let fhir { files += try fhir.finish() }
        return files.sorted { $0.path < $1.path }
    }

    private func writeJSON(_ value: some Encodable, to directory: URL, name: String, folder: String) throws -> ExportedFile {
        let data: Data
        do {
            data = try CanonicalJSON.pretty(value) + Data("\n".utf8)
        } catch {
            throw CohortError(.system, "cannot encode export metadata", at: .init(file: "data/\(folder)/\(name)"))
        }
        let writer = try BufferedFileWriter(url: directory.appendingPathComponent(name), relativePath: "data/\(folder)/\(name)", taps: taps)
        try writer.write(data)
        try writer.close()
        return ExportedFile(path: writer.relativePath, rows: 0, bytes: writer.bytesWritten)
    }

    private func checkOpen() throws {
        if finished {
            throw CohortError(.conflict, "the export writer was used after finish", hint: "create a new ExportWriter for another export")
        }
    }

    private static func isFileNameSafe(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D || byte == 0x5F
    }
}
