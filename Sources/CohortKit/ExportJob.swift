import CohortCompliance
public import CohortCore
import CohortCrypto
public import CohortDeid
import CohortExport
public import CohortPackage
import CohortStore
public import Foundation
import CohortIO

#if canImport(Glibc)
    import Glibc
#endif

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
    /// The bag directory (only with `archive: false`).
    public var bagDirectory: URL?
    /// Participants exported.
    public var participants: Int
    /// Records exported.
    public var records: Int
    /// Participants left out, by reason (withdrawn, suppressed for k-anonymity).
    public var exclusions: [String: Int]
    /// Every file of the bag with its digest, size and row count.
    public var files: [BagFile]
    /// The de-identification report written into the bag (`data/reports/deidentification.json`).
    public var report: DeidentificationReport
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
        Self.returnLargeBlocksWhenFreed()
        let plan = try ExportPlan(workspace: workspace, options: options)
        let inProgress = try reserve(plan)
        defer { inProgress.end() }
        let staging = try stage(inProgress)
        var clock = ExportStageClock()
        let recipientKey = try workspace.keystore.recipientKey(for: plan.recipient)
        let written: WrittenExport
        do {
            // The de-identifier (holding the scrubber's identifier index) ends with this block,
            // before the residual scanner builds its own: one index is alive at a time.
            var snapshot = try takeSnapshot(inProgress, plan: plan)
            var cohort = try deidentify(&snapshot, plan: plan, recipientKey: recipientKey)
            try kAnonymize(&cohort, policy: plan.studyProtocol.deidentification)
            Self.returnFreedMemory()
            written = try write(&cohort, plan: plan, staging: staging)
        }
        try writeReadme(written, plan: plan, staging: staging)
        clock.end("write")
        // The scanner's roster is read now (see `Workspace.residualScanner()`): identities change
        // only by an erase, and an erase since the snapshot makes the export refuse at publish,
        // so it holds every identifier the snapshot had. Freed memory goes back before and after
        // its index is built, so neither the write's buffers nor the collection stay resident.
        Self.returnFreedMemory()
        let scanner = try workspace.residualScanner()
        Self.returnFreedMemory()
        let scanned = try residualScan(scanner, plan: plan, staging: staging)
        let report = try writeReport(written, scanned, plan: plan, recipientKey: recipientKey, staging: staging)
        clock.end("scan")
        let contents = try bag(plan: plan, staging: staging)
        clock.end("bag")
        var outcome = try publish(written, scanned, report: report, contents: contents, plan: plan, staging: staging, inProgress: inProgress)
        clock.end("archive")
        outcome.stages = clock.stages
        return outcome
    }

    /// Hands the memory freed so far back to the system (glibc keeps freed blocks in its heap,
    /// so the resident size would keep the high-water mark of building an identifier index —
    /// a transient per-participant structure — through the whole streaming stage after it).
    static func returnFreedMemory() {
        #if canImport(Glibc)
        // `malloc_trim` is glibc's (malloc.h, which the Glibc module does not export): looked up
        // once; a C library without it has nothing to trim this way.
        if let trim = mallocTrim { _ = trim(0) }
        #endif
    }

    /// Asks glibc to give every block of 128 KiB or more its own mapping, returned to the system
    /// as soon as it is freed. glibc raises this threshold by itself each time such a block is
    /// freed (up to 32 MiB), after which the export's large transient tables (an identifier
    /// collection, a k-anonymity table) would be carved from the heap and keep the resident size
    /// at their high-water mark. Done once per process.
    static func returnLargeBlocksWhenFreed() {
        #if canImport(Glibc)
        _ = fixedMmapThreshold
        #endif
    }

    #if canImport(Glibc)
    private static let fixedMmapThreshold: Bool = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return false }
        let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        return mallopt(-3, 128 * 1024) == 1  // M_MMAP_THRESHOLD (malloc.h)
    }()

    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()
    #endif
}
