import CohortCompliance
public import CohortCore
import CohortCrypto
public import CohortDeid
import CohortExport
public import CohortPackage
import CohortStore
public import Foundation
import CohortIO

/// What `cohort export` is asked to do.
public struct ExportOptions: Sendable {
    /// The named recipient (letters, digits, space, `.`, `_`, `-`; at most 64): keys the pseudonyms and date shift.
    public var recipient: String
    /// Formats to write (default: the protocol's).
    public var formats: Set<ExportFormat>?
    /// The folder the archive, manifest and signature (or the bag) are published into; created mode 0700.
    public var outDirectory: URL
    /// The export's creation instant (fixes archive times for reproducible output); default now.
    public var createdAt: Date?
    /// Write the signed archive (default) or leave the bag directory.
    public var archive: Bool
    /// zlib level: 1 (fast), 6 (default), 9 (best).
    public var compressionLevel: Int
    /// Reviewed exceptions to the residual-PII scan (`--allow FILE`); none by default.
    public var exceptions = ResidualExceptionList([])
    /// The FHIR shapes to write: Bulk NDJSON (default), per-participant collection Bundles, or both.
    public var fhirLayout: FHIRLayout = .bulk
    /// Also write one transaction Bundle per participant (`--fhir-transaction`).
    public var fhirTransactions = false
    /// Export only the participants of this site (`--site`); nil (the default) exports the whole
    /// study. The scope is stated in the manifest (`site`), the README and the audit events.
    public var site: String?
    /// Who the export is for (`--audience`): an outside recipient (the default) or the study team.
    /// Only participants whose sharing scope allows the audience are included.
    public var audience: ExportAudience = .external
    /// Encrypt the archive to recipient certificates (`--encrypt-to`): the published file is
    /// `X.tar.gz.p7m` (CMS), and the plaintext archive is kept only when asked.
    public var encryption: ExportEncryption?
    /// Threads that read and de-identify records, participant by participant (the rows are
    /// written in participant order, so the output is the same for any count); 1 does it on the
    /// writing thread itself. Default: the cores this process may use (its affinity mask and CPU
    /// quota, ``Cores/available``).
    public var threads = Cores.available
    /// Called once the export's snapshot is taken (`export.begin` committed, the roster read)
    /// and before anything is written; nil (the default) in `cohort`. A test sets it, through the
    /// test-only executable `cohort-export-paused`, to hold an export at that point while another
    /// process withdraws a participant: the shipped binary reads no test hook from its environment.
    package var afterSnapshot: (@Sendable () -> Void)?
    /// Records per chunk the record workers hand to the write stage (``RecordWorkers/chunkSize``;
    /// tests make it small so that chunk boundaries fall inside participants).
    package var recordChunkSize = RecordWorkers.chunkSize
    /// Whether the payload files the archive, the digests and the residual scan take whole from
    /// what their writers wrote also get a copy in the staging folder (``ExportJob/checkTapOnlyFiles(written:deflated:described:scanned:)``);
    /// false (the default) writes them to those alone. Tests set it to hold the two archives equal.
    package var stagesEveryPayloadFile = false

    /// Options with the defaults described above; each parameter is the property of the same name.
    public init(recipient: String, formats: Set<ExportFormat>? = nil, outDirectory: URL, createdAt: Date? = nil, archive: Bool = true, compressionLevel: Int = 6) {
        self.recipient = recipient
        self.formats = formats
        self.outDirectory = outDirectory
        self.createdAt = createdAt
        self.archive = archive
        self.compressionLevel = compressionLevel
    }
}

/// What an export produced.
public struct ExportOutcome: Sendable {
    /// The bag's name (also the archive's, without `.tar.gz`).
    public var bagName: String
    /// The archive (nil with `archive: false`).
    public var archive: ArchiveResult?
    /// The signed manifest (nil with `archive: false`).
    public var manifestURL: URL?
    /// The manifest's Ed25519 signature (nil with `archive: false`).
    public var signatureURL: URL?
    /// The encrypted archive (`X.tar.gz.p7m`), with `--encrypt-to`.
    public var encryptedURL: URL? {
        guard let archive, let encrypted = archive.encrypted else { return nil }
        return archive.url.deletingLastPathComponent().appendingPathComponent(encrypted.fileName)
    }
    /// The bag directory (only with `archive: false`).
    public var bagDirectory: URL?
    /// Participants exported.
    public var participants: Int
    /// Records exported.
    public var records: Int
    /// Participants left out, by reason (withdrawn, consent, suppressed for k-anonymity).
    public var exclusions: [String: Int]
    /// Records consent left out, by `data type: reason`.
    public var recordExclusions: [String: Int] = [:]
    /// The audience the export was made for.
    public var audience: ExportAudience = .external
    /// Every file of the bag with its digest, size and row count.
    public var files: [BagFile]
    /// The de-identification report written into the bag (`data/reports/deidentification.json`).
    public var report: DeidentificationReport
    /// The payload files (bag-relative paths) deflated as they were written, which the archive
    /// copied rather than compressed again: the tables, FHIR files and compliance report.
    public var deflatedWhileWritten: [String] = []
    /// How many of the files the residual scan covered it scanned from their bytes as they were
    /// written (``WrittenFileScan``), not read back; the others were read.
    public var scannedWhileWritten = 0
    /// The payload files written with no copy in the staging folder, sorted (bag-relative paths):
    /// the archive took them from the deflate spool, the manifest's digests and the residual scan
    /// from the same writes (``ExportOptions/stagesEveryPayloadFile``).
    public var writtenWithoutStagedCopy: [String] = []
    /// Wall-clock seconds of each stage, in order: write (store → de-identify → files), scan
    /// (residual PII), bag (digests and row counts), archive (tar.gz, manifest, signature).
    public var stages: [(name: String, seconds: Double)] = []
}

/// `cohort export`: store → de-identifier → writers → reports → residual-PII scan → BagIt bag →
/// tar.gz → signed manifest. Streams records one participant at a time; publishes nothing
/// unless every step succeeded.
///
/// ``run()`` is a list of named stages (`ExportJob+Stages.swift`): plan (recipient and formats
/// checked) → reserve (`export.begin`) → stage (hidden folder) → snapshot (the roster) →
/// de-identify → k-anonymity → write (data files, compliance, README) → residual scan → report →
/// bag → publish (archive, `export.create`, signed manifest, final names). ``ExportOutcome/stages``
/// times them in four groups the benchmark prints: write, scan, bag, archive.
public struct ExportJob: Sendable {
    /// The workspace exported from.
    public let workspace: Workspace
    /// What to export, for whom, and where.
    public var options: ExportOptions
    /// Progress: participants done so far.
    public var progress: (@Sendable (Int, Int) -> Void)?

    /// An export of `workspace` with `options`; `progress` is called with (participants done, participants to do).
    public init(workspace: Workspace, options: ExportOptions, progress: (@Sendable (Int, Int) -> Void)? = nil) {
        self.workspace = workspace
        self.options = options
        self.progress = progress
    }

    /// Runs the export (see the type's stages) and says what it published. Throws `CohortError`: `.invalidInput`
    /// for a bad recipient name, `.policy` for a format the protocol does not allow or residual identifiers
    /// found by the scan (their hashes are written next to the output), `.conflict` when the export already exists or a withdrawal since the
    /// snapshot is found, and the store's, keystore's or file system's errors. Nothing is published then.
    public func run() throws -> ExportOutcome {
        let plan = try ExportPlan(workspace: workspace, options: options)
        // The scrubber's word lists (read once per process, about 0.3 s on one thread at bench
        // M) load while the export reserves, stages and takes its snapshot; the scrubber's build
        // (on a thread of its own, see `deidentify`) waits for them if they are not in yet (a
        // `static let`), and so does the end of the export.
        let vocabulary = BackgroundValue(name: "cohort-word-lists") { _ = try? SafeVocabulary.system() }
        defer { _ = try? vocabulary.value() }
        let inProgress = try reserve(plan)
        defer { inProgress.end() }
        let staging = try stage(inProgress)
        var clock = ExportStageClock()
        let recipientKey = try workspace.keystore.recipientKey(for: plan.recipient)
        let written: WrittenExport
        let scanner: ResidualScanner
        do {
            // The de-identifier (holding the scrubber's identifier index) ends with this block.
            var snapshot = try takeSnapshot(inProgress, plan: plan)
            var cohort = try deidentify(&snapshot, plan: plan, recipientKey: recipientKey)
            // The residual scanner's roster is read after the snapshot (see
            // `Workspace.residualScanner()`): identities change only by an erase, and an erase
            // since the snapshot makes the export refuse at publish, so it holds every identifier
            // the snapshot had. It scans the files as they are written (`WrittenFileScan`). It is
            // built on a thread of its own while the k-anonymity pass runs (built after it, it
            // held the write back on one core; issue 28), and freed memory goes back once its
            // index is built, so the collection does not stay resident.
            let workspace = workspace
            let scannerBuild = BackgroundValue(name: "cohort-export-scanner") {
                defer { ProcessMemory.returnFreedMemory() }
                return try workspace.residualScanner()
            }
            defer { _ = try? scannerBuild.value() }  // no thread reads the store once the export has returned
            try kAnonymize(&cohort, policy: plan.studyProtocol.deidentification)
            try cohort.deid.awaitScrubber()
            ProcessMemory.returnFreedMemory()
            scanner = try scannerBuild.value()
            // The store's own connection has cached what the stages so far read through it
            // (the roster, the consents, the audit trail: up to SQLite's 2 MB, more of it the
            // larger the study); the write reads through connections of its own.
            workspace.store.releaseCachedMemory()
            ProcessMemory.returnFreedMemory()
            written = try write(&cohort, plan: plan, staging: staging, scanner: scanner)
        }
        try writeReadme(written, plan: plan, staging: staging)
        clock.end("write")
        let scanned = try residualScan(scanner, written: written.scanned, plan: plan, staging: staging)
        let report = try writeReport(written, scanned, plan: plan, recipientKey: recipientKey, staging: staging)
        clock.end("scan")
        let contents = try bag(written, plan: plan, staging: staging)
        clock.end("bag")
        var outcome = try publish(written, scanned, report: report, contents: contents, plan: plan, staging: staging, inProgress: inProgress)
        clock.end("archive")
        outcome.stages = clock.stages
        return outcome
    }
}

/// What an export would publish, counted without writing anything (`cohort export --dry-run`).
public struct ExportDryRun: Sendable {
    /// Who the export would be for.
    public var audience: ExportAudience
    /// Participants it would include (after consent and k-anonymity).
    public var participants: Int
    /// Records of those participants that consent covers (records dated after the export instant are left out at write, not here).
    public var records: Int
    /// Participants left out, by reason (withdrawn, consent, suppressed for k-anonymity).
    public var exclusions: [String: Int]
    /// Records consent would leave out, by `data type: reason`.
    public var recordExclusions: [String: Int]
}

extension ExportJob {
    /// Counts what ``run()`` would publish and leave out, by reason, without writing a file or an
    /// audit event: the same snapshot, consent decisions, de-identification and k-anonymity, and a
    /// read of the included participants' records. Throws what `run()` throws before its first write.
    public func dryRun() throws -> ExportDryRun {
        let plan = try ExportPlan(workspace: workspace, options: options)
        let recipientKey = try workspace.keystore.recipientKey(for: plan.recipient)
        var snapshot = try takeSnapshot(nil, plan: plan)
        var cohort = try deidentify(&snapshot, plan: plan, recipientKey: recipientKey)
        try kAnonymize(&cohort, policy: plan.studyProtocol.deidentification)
        try cohort.deid.awaitScrubber()  // a missing word list stops a dry run as it stops the export
        var records = 0
        var recordExclusions: [String: Int] = [:]
        for stored in cohort.included {
            guard let coverage = cohort.coverage[stored.participant.id] else { continue }
            let leftOutKinds = cohort.leftOutKinds[stored.participant.id]
            try workspace.store.forEachRecord(stored.handle, participantID: stored.participant.id) { record in
                if let key = coverage.leftOutKey(for: record) {
                    recordExclusions[key, default: 0] += 1
                } else if leftOutKinds?.contains(record.kind.rawValue) != true {  // left out for k (in the report's k-anonymity section)
                    records += 1
                }
            }
        }
        return ExportDryRun(
            audience: plan.audience, participants: cohort.included.count, records: records, exclusions: cohort.exclusions,
            recordExclusions: recordExclusions)
    }
}
