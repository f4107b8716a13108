import CohortCore
import CohortCrypto
public import CohortImport
import CohortIO
import CohortStore
public import Foundation

/// An outside source of records: FHIR R4, or the app backend's `health_metrics` in one of its
/// three forms.
public enum ExternalSource: Sendable {
    /// A FHIR NDJSON or Bundle file, or a folder of them.
    case fhir(URL)
    /// A CSV dump of the `health_metrics` table.
    case healthMetricsCSV(URL)
    /// The sync API's JSON batch bodies (one `.json` body, or `.ndjson` with one per line).
    case healthMetricsSync(URL)
    /// The `health_metrics` table in PostgreSQL: a libpq URL and the table name.
    case healthMetricsTable(url: String, table: String)

    /// The import batch's format name.
    public var format: String {
        switch self {
        case .fhir: "fhir"
        case .healthMetricsCSV: "health-metrics-csv"
        case .healthMetricsSync: "health-metrics-sync"
        case .healthMetricsTable: "health-metrics-postgresql"
        }
    }

    /// What the summary names: the path, or `table <name>` (never the URL, which may hold a password).
    public var label: String {
        switch self {
        case .fhir(let url), .healthMetricsCSV(let url), .healthMetricsSync(let url): url.path
        case .healthMetricsTable(_, let table): "table \(table)"
        }
    }
}

/// What importing an outside source did.
public struct ExternalImportResult: Sendable, Codable {
    /// The source as given (a path, or `table NAME`).
    public var source: String
    /// The import batch's format name (`fhir`, `health-metrics-csv`, …; see ``ExternalSource/format``).
    public var format: String
    /// What the reader saw and skipped (rows or resources, records per metric or kind, reasons).
    public var tally: ImportTally
    /// Records stored now, and already stored by an earlier import.
    public var inserted: Int
    /// Records already stored by an earlier import (not stored again).
    public var duplicates: Int
    /// Records the study's rules leave out, by reason (outside the study period, not consented).
    public var outside: [String: Int]
    /// Records imported (new or already stored), by metric (health_metrics column) or kind (FHIR).
    public var imported: [String: Int] = [:]
    /// With `--rejects`: records, resources or rows refused and written to the rejects file, by reason.
    public var rejected: [String: Int] = [:]
    /// Wall-clock seconds the import took.
    public var seconds: Double
}

/// Imports FHIR and `health_metrics` into the workspace: the source's reader maps patients or
/// users to study codes and resources or metrics to records; every record then goes through the
/// same validator and the same one-transaction store path as cohort's own files. One source is
/// one transaction (a FHIR folder included): on the first invalid record nothing is stored —
/// unless a rejects file is given (``rejects``), when good records are stored and each refused
/// record, resource or row is written there with its reason and counted
/// (``ExternalImportResult/rejected``).
///
/// Records dated outside a participant's study period, or when their consent does not cover
/// them, are counted (``ExternalImportResult/outside``) rather than refused: an outside system
/// holds more than the study's window.
public struct ExternalImporter: Sendable {
    /// The workspace whose store receives the records.
    public let workspace: Workspace
    /// The coordinator's `user_id,participant` CSV (health_metrics user ids, FHIR patient identifiers).
    public var userMap: URL?
    /// For FHIR exported by cohort: the export's recipient, whose pseudonyms map back to study
    /// codes and whose date shift is undone.
    public var recipient: String?
    /// Called with the number of records read so far.
    public var progress: (@Sendable (Int) -> Void)?
    /// A partial import: good records are stored, and each refused record, resource or row is
    /// written to this CSV (mode 0600: it holds values) with its line, field and reason; nil = one
    /// transaction that stores nothing on the first invalid record.
    public var rejects: URL?

    /// An importer into `workspace`, with the optional user map, FHIR recipient, progress callback
    /// and rejects file described above.
    public init(
        workspace: Workspace, userMap: URL? = nil, recipient: String? = nil, progress: (@Sendable (Int) -> Void)? = nil, rejects: URL? = nil
    ) {
        self.workspace = workspace
        self.userMap = userMap
        self.recipient = recipient
        self.progress = progress
        self.rejects = rejects
    }

    /// Imports `source` in one transaction and says what it did. Throws `CohortError` (file, line or resource,
    /// field; never a value) on the first invalid record, a missing user map entry, or an unreadable source; nothing
    /// is stored then.
    public func run(_ source: ExternalSource) throws -> ExternalImportResult {
        let started = Date()
        let p = try workspace.currentProtocol().studyProtocol
        let isFHIR: Bool
        if case .fhir = source { isFHIR = true } else { isFHIR = false }
        if !isFHIR, userMap == nil {
            throw CohortError(.invalidInput, "health_metrics needs --user-map", at: .init(field: "--user-map"),
                hint: "give a CSV with the header user_id,participant that maps the backend's user ids to study codes")
        }
        if !isFHIR, recipient != nil {
            throw CohortError(.invalidInput, "--recipient applies to FHIR exported by cohort", at: .init(field: "--recipient"))
        }
        let directory = try makeDirectory(withMRNs: isFHIR && p.importSettings.patientIdentifierSystem != nil)
        let subjects = try StoreSubjects(workspace: workspace)
        let validator = try RecordValidator(directory: subjects, studyProtocol: p, file: source.label, now: workspace.now())
        let info = ImportBatchInfo(fileName: Self.batchName(source), fileSHA256: try Self.digest(source), format: source.format)
        // In a folder of FHIR files a line number alone does not say where: the field names the file too.
        let namesFiles: Bool
        if case .fhir(let url) = source { namesFiles = try FHIRReader.files(at: url).count > 1 } else { namesFiles = false }
        let intake = ExternalRecordIntake(
            validator: validator, handles: subjects.handles, rejects: try rejects.map { try RejectsWriter(url: $0, columns: RecordImporter.columns) },
            namesFiles: namesFiles, progress: progress)
        var tally = ImportTally()
        let result = try workspace.store.importBatch(info, actor: workspace.actor, at: workspace.now()) { inserter in
            tally = try Self.read(source, directory: directory, studyProtocol: p, rejecting: intake.rejecting) { try intake.take($0, into: inserter) }
            try inserter.flush()
            try intake.rejects?.close()
            return (tally.records, inserter.insertedCount, intake.accepted - inserter.insertedCount, intake.outside.values.reduce(0, +))
        }
        _ = try workspace.checkpoint()
        var outcome = ExternalImportResult(
            source: source.label, format: source.format, tally: tally, inserted: result.inserted, duplicates: result.duplicates,
            outside: intake.outside, seconds: Date().timeIntervalSince(started))
        outcome.imported = intake.imported
        outcome.rejected = intake.rejected
        return outcome
    }

    /// Reads `source` with its reader, handing each record to `take`, and returns what the
    /// reader saw and skipped.
    static func read(
        _ source: ExternalSource, directory: ParticipantDirectory, studyProtocol p: StudyProtocol, rejecting: ((CohortError) throws -> Void)?,
        _ take: (SourceRecord) throws -> Void
    ) throws -> ImportTally {
        switch source {
        case .fhir(let url):
            let reader = FHIRReader(directory: directory, settings: p.importSettings, collected: p.collectedKinds)
            reader.rejecting = rejecting
            for file in try FHIRReader.files(at: url) { try reader.read(file: file, take) }
            return reader.tally
        case .healthMetricsCSV(let url):
            var mapper = HealthMetricsMapper(userMap: directory.userMap.codes, collected: p.collectedKinds)
            mapper.rejecting = rejecting
            var columns: [String: Int] = [:]
            try HealthMetricsCSV.forEachDay(url: url, tally: { columns[$0, default: 0] += 1 }, rejecting: rejecting) { try mapper.map($0, take) }
            var tally = mapper.tally
            tally.skipped.merge(columns, uniquingKeysWith: +)
            return tally
        case .healthMetricsSync(let url):
            var mapper = HealthMetricsMapper(userMap: directory.userMap.codes, collected: p.collectedKinds)
            mapper.rejecting = rejecting
            var unknown: [String: Int] = [:]
            try HealthMetricsSync.forEachDay(url: url, tally: { unknown[$0, default: 0] += 1 }) { try mapper.map($0, take) }
            var tally = mapper.tally
            tally.skipped.merge(unknown, uniquingKeysWith: +)
            return tally
        case .healthMetricsTable(let url, let table):
            var mapper = HealthMetricsMapper(userMap: directory.userMap.codes, collected: p.collectedKinds)
            mapper.rejecting = rejecting
            try HealthMetricsTable.forEachDay(url: url, table: table) { try mapper.map($0, take) }
            return mapper.tally
        }
    }

    static func validate(_ record: SourceRecord, with validator: RecordValidator, handles: [ParticipantHandle]) throws -> (ParticipantHandle, Record) {
        let columns = record.columns
        let (position, validated) = try RecordFields.with(columns) { fields in try validator.validate(fields, line: record.line) }
        return (handles[position], validated)
    }

    /// The reason a validation error is a record outside what the study takes (counted), or nil
    /// for a real input error.
    static func outsideReason(_ error: CohortError) -> String? {
        if error.code == .policy { return "not covered by consent (withdrawn, or not yet consented)" }
        switch error.cause {
        case .recordBeforeEnrollment?: return "before enrollment"
        case .recordAfterStudyPeriod?: return "after the study period"
        default: return nil
        }
    }

    func makeDirectory(withMRNs: Bool) throws -> ParticipantDirectory {
        let stored = try workspace.store.participants(withIdentities: withMRNs)
        let codes = Set(stored.map(\.participant.code))
        var directory = ParticipantDirectory(codes: codes)
        for s in stored { directory.timeZones[s.participant.code] = s.participant.timeZone }
        if withMRNs {
            for s in stored { if let mrn = s.participant.identity?.mrn, !mrn.isEmpty { directory.mrns[mrn] = s.participant.code } }
        }
        if let userMap { directory.userMap = try UserMap.load(userMap, codes: codes) }
        if let recipient {
            for e in try PseudonymMap.entries(workspace: workspace, recipient: recipient) {
                directory.pseudonyms[e.pseudonym] = .init(code: e.code, shiftDays: e.shiftDays, timeZone: e.timeZone)
            }
        }
        return directory
    }

    static func batchName(_ source: ExternalSource) -> String {
        switch source {
        case .fhir(let url), .healthMetricsCSV(let url), .healthMetricsSync(let url): url.lastPathComponent
        case .healthMetricsTable(_, let table): table
        }
    }

    /// The SHA-256 of the input files (a folder: of its files' digests in name order); for a
    /// table, of its name (a live table has no fixed content to hash).
    static func digest(_ source: ExternalSource) throws -> String {
        switch source {
        case .fhir(let url):
            let files = try FHIRReader.files(at: url)
            if files.count == 1 { return try RecordImporter.fileSHA256(files[0]) }
            return SHA256.hex(Array(try files.map { try RecordImporter.fileSHA256($0) }.joined(separator: "\n").utf8))
        case .healthMetricsCSV(let url), .healthMetricsSync(let url):
            return try RecordImporter.fileSHA256(url)
        case .healthMetricsTable(_, let table):
            return SHA256.hex(Array("postgresql table \(table)".utf8))
        }
    }
}

extension ExternalSource {
    /// The source `url` holds, judged by its content: a folder or a JSON file naming a FHIR
    /// `resourceType` is FHIR; a CSV whose header has `user_id` and `recorded_at` (or `date`) and
    /// no `participant` is a health_metrics dump; a JSON body with `records` and `userId` a sync batch; nil for
    /// anything else (cohort's own record files).
    public static func sniff(_ url: URL) -> ExternalSource? {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else { return nil }
        if isFolder.boolValue { return .fhir(url) }
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return nil }
        defer { try? handle.close() }
        let head = String(decoding: (try? handle.read(upToCount: 4096)) ?? Data(), as: UTF8.self)
        let firstLine = head.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? ""
        if firstLine.contains("\"resourceType\"") || head.hasPrefix("{") && head.contains("\"resourceType\"") { return .fhir(url) }
        if firstLine.contains("\"records\"") && firstLine.contains("\"userId\"") { return .healthMetricsSync(url) }
        let columns = firstLine.split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\" \t\r")) }
        if HealthMetricsCSV.headerLooksLikeDump(columns) { return .healthMetricsCSV(url) }
        return nil
    }

    /// The source for `url` read as `from` (`fhir` or `health-metrics`): a health_metrics file is
    /// a CSV dump, or sync bodies when it ends in `.json`/`.ndjson`/`.jsonl`.
    public static func named(_ from: String, _ url: URL) -> ExternalSource? {
        switch from {
        case "fhir": return .fhir(url)
        case "health-metrics":
            return ["json", "ndjson", "jsonl"].contains(url.pathExtension.lowercased()) ? .healthMetricsSync(url) : .healthMetricsCSV(url)
        default: return nil
        }
    }
}
