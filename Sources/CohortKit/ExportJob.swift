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
        let pinned = try workspace.currentProtocol()
        let p = pinned.studyProtocol
        let recipient = options.recipient.trimmingCharacters(in: .whitespaces)
        guard recipient.range(of: #"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$"#, options: .regularExpression) != nil else {
            throw CohortError.invalid("expected a recipient name of letters, digits, space, '.', '_' or '-' (at most 64)", field: "recipient")
        }
        let formats = options.formats ?? Set(p.export.formats)
        for format in formats where !p.export.formats.contains(format) {
            throw CohortError(.policy, "the protocol does not allow \(format.rawValue) exports", hint: "allowed: \(p.export.formats.map(\.rawValue).joined(separator: ", "))")
        }
        let created = options.createdAt ?? workspace.now()
        let createdAt = Timestamp(epochMilliseconds: Int64(created.timeIntervalSince1970.rounded(.down)) * 1000)
        let fm = FileManager.default
        try fm.createDirectory(at: options.outDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // Two-phase export (see ExportInProgress): the name is reserved and `export.begin`
        // committed before anything is read; the roster read after it is the export's snapshot.
        let inProgress = try ExportInProgress.begin(
            workspace: workspace, studyID: p.id, baseName: BagWriter.bagName(studyID: p.id, createdAt: createdAt),
            outDirectory: options.outDirectory, uniqueName: options.createdAt == nil, archive: options.archive, recipient: recipient)
        defer { inProgress.end() }
        let bagName = inProgress.bagName
        let finalBag = options.outDirectory.appendingPathComponent(bagName, isDirectory: true)
        let archiveURL = options.outDirectory.appendingPathComponent(bagName + ".tar.gz")
        // Everything is built in a hidden staging folder and only published when complete.
        let staging = inProgress.stagingDirectory
        let bag = staging.appendingPathComponent(bagName, isDirectory: true)
        try fm.createDirectory(at: bag.appendingPathComponent("data", isDirectory: true), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])

        let clock = ContinuousClock()
        var stageStart = clock.now
        var stages: [(name: String, seconds: Double)] = []
        func endStage(_ name: String) {
            let now = clock.now
            stages.append((name, (now - stageStart) / .seconds(1)))
            stageStart = now
        }
        let recipientKey = try workspace.keystore.recipientKey(for: recipient)
        var exclusions: [String: Int] = [:]
        var included: [StoredParticipant] = []
        var kSummary: KAnonymitySummary?
        var records = 0
        let context: ExportContext
        let deidentificationStats: DeidentificationStats
        // The roster's identities are kept for the residual scanner, whose identifier index is
        // built only when the de-identifier (holding the scrubber's index) is gone: one index is
        // alive at a time, so peak memory grows with the roster by one index, not two.
        var scanRoster: [Participant] = []
        do {
            let roster = try workspace.store.participants(withIdentities: true)
            inProgress.pauseIfAsked()
            scanRoster = roster.map(\.participant)
            var deid = try Deidentifier(
                studyProtocol: p, recipient: recipient, recipientKey: recipientKey, roster: scanRoster, referenceDate: createdAt.localDate,
                createdAt: createdAt)
            for stored in roster {
                switch stored.participant.status {
                case .excluded: exclusions["withdrawn (exclude)", default: 0] += 1
                case .erased: exclusions["withdrawn (erase)", default: 0] += 1
                case .active, .stopped: included.append(stored)
                }
            }
            // Participants are few: de-identify them all first, for k-anonymity over the cohort.
            var rows = included.map { deid.participant($0.participant) }
            // Participants whose quasi-identifiers could not be generalized or suppressed enough
            // are left out entirely (records and consents too), and counted.
            kSummary = try Self.applyKAnonymity(policy: p.deidentification, included: &included, rows: &rows, exclusions: &exclusions)
            // A generalized `utc_offset` means every time is published in UTC, not only the column.
            if kSummary?.generalized["utc_offset"] != nil { deid.publishesTimesInUTC = true }
            // From here on nothing needs an identity: rows, consents, records and compliance use
            // ids, zones and dates only.
            for index in included.indices { included[index].participant.identity = nil }
            context = ExportContext(
                studyProtocol: p, protocolSHA256: pinned.sha256, policySHA256: try DeidentificationReport.policySHA256(p.deidentification),
                recipient: recipient, createdAt: createdAt, toolVersion: CohortVersion.string, exclusions: exclusions, formats: formats,
                fhirLayout: options.fhirLayout, fhirTransactions: options.fhirTransactions)
            let writer = try ExportWriter(dataDirectory: bag.appendingPathComponent("data", isDirectory: true), context: context)
            let reports = bag.appendingPathComponent("data/reports", isDirectory: true)
            try fm.createDirectory(at: reports, withIntermediateDirectories: true)
            // Compliance is counted from the records as they stream by and written one participant
            // at a time (the export form: pseudonyms, no codes, zones or dates).
            let complianceFile = try BufferedFileWriter(
                url: reports.appendingPathComponent("compliance.json"), relativePath: "data/reports/compliance.json")
            var compliance = try ComplianceExportStream(studyProtocol: p, asOf: created) { try complianceFile.write($0) }
            for (index, stored) in included.enumerated() {
                let participant = stored.participant
                let consents = try workspace.store.consentHistory(stored.handle, participantID: participant.id).map {
                    deid.consent($0, of: participant)
                }
                try writer.beginParticipant(rows[index], consents: consents)
                try compliance.begin(ComplianceSubject(participant), pseudonym: rows[index].pseudonym)
                try workspace.store.forEachRecord(stored.handle, participantID: participant.id) { record in
                    compliance.add(kind: record.kind, start: record.start)
                    guard let row = deid.record(record, of: participant) else { return }  // dated after createdAt
                    try writer.write(row)
                    records += 1
                }
                progress?(index + 1, included.count)
            }
            _ = try writer.finish(deidentificationSummary: ["participants": included.count, "records": records])
            try compliance.finish()
            try complianceFile.close()
            deidentificationStats = deid.stats
        }

        // README.
        let readme = try Templates.render(
            Templates.builtIn("export-readme.mustache", fallback: "{{title}}\nDe-identified export for {{recipient}}\n"),
            Templates.studyContext(p).merging(
                [
                    "recipient": recipient, "protocol_sha256": pinned.sha256, "created_at": createdAt.iso8601, "tool_version": CohortVersion.string,
                    "participants": included.count, "excluded": exclusions.values.reduce(0, +), "records": records, "bag_name": bagName,
                ], uniquingKeysWith: { $1 }), name: "export-readme.mustache")
        try Data(readme.utf8).write(to: bag.appendingPathComponent("data/README.txt"))

        endStage("write")
        let scanner = ResidualScanner(roster: scanRoster)
        scanRoster = []
        // The residual-PII scan over the participant values written so far (cohort's fixed-text
        // files are skipped by path); any hit no reviewed exception covers publishes nothing.
        var scan = try scanner.scan(directory: bag.appendingPathComponent("data", isDirectory: true))
        var refused: [ResidualFinding] = []
        var used: [ResidualException: Int] = [:]
        for finding in scan.findings {
            if let exception = options.exceptions.exception(covering: finding) {
                used[exception, default: 0] += 1
            } else {
                refused.append(finding)
            }
        }
        if !refused.isEmpty {
            _ = try? workspace.store.appendEvent(
                actor: workspace.actor, action: "export.refused", details: ["reason": "residual identifiers", "findings": String(refused.count)],
                at: workspace.now())
            let advice = refused.prefix(10).map { ResidualScanAdvice.advice(for: $0, policy: p.deidentification) }
            // The findings (places and value hashes, never values) for a reviewer: completed with
            // reviewer and reason, the file is an exceptions list for `--allow`.
            let findingsURL = options.outDirectory.appendingPathComponent(bagName + ".residual-findings.csv")
            var rows = [CSVText.record(["table", "column", "value_sha256", "reviewer", "reason", "file", "line", "kind"])]
            for f in refused.sorted() {
                rows.append(CSVText.record([f.table, f.field ?? "", f.valueSHA256, "", "", f.file, String(f.line), f.kind.rawValue]))
            }
            let wroteFindings = fm.createFile(atPath: findingsURL.path, contents: Data(rows.joined().utf8), attributes: [.posixPermissions: 0o600])
            throw CohortError(
                .policy, "the residual-PII scan found \(refused.count) participant identifier(s) in the export; nothing was published",
                hint: advice.joined(separator: "; ") + (refused.count > 10 ? "; …" : "")
                    + (wroteFindings ? ". All findings with value hashes: \(findingsURL.path) (add reviewer and reason to use it with --allow)" : ""))
        }
        var listed: Set<ResidualException> = []
        let reviewed = options.exceptions.exceptions.compactMap { e in
            // A value listed twice is recorded once.
            (listed.insert(e).inserted ? used[e] : nil).map {
                ExportManifest.ReviewedException(
                    table: e.table, column: e.column, valueSHA256: e.valueSHA256, reviewer: e.reviewer, reason: e.reason, findings: $0)
            }
        }
        if !reviewed.isEmpty {
            // Every exception used is in the audit trail: hashes and counts, never values.
            try workspace.store.appendEvent(
                actor: workspace.actor, action: "export.exception", subject: p.id,
                details: [
                    "bag": bagName, "exceptions": String(reviewed.count), "findings": String(scan.findings.count),
                    "value_sha256": reviewed.map(\.valueSHA256).joined(separator: ","),
                    "fields": reviewed.map { "\($0.table).\($0.column)" }.joined(separator: ","),
                    "reviewers": Set(reviewed.map(\.reviewer)).sorted().joined(separator: ","),
                ], at: workspace.now())
        }
        // The report lists the excepted findings (places, kinds and hashes; no values).
        scan.findings = scan.findings.sorted()
        var fingerprints = ["signing": workspace.keystore.fingerprints.signing, "study_secret": workspace.keystore.fingerprints.studySecret]
        fingerprints["recipient_key"] = "SHA256:" + SHA256.hex(Array("cohort/fingerprint/recipient/v1".utf8) + [0] + recipientKey)
        let report = try DeidentificationReport(
            studyProtocol: p, recipient: recipient, stats: deidentificationStats, keyFingerprints: fingerprints, kAnonymity: kSummary, residualScan: scan)
        let reportURL = bag.appendingPathComponent("data/reports/deidentification.json")
        try CanonicalJSON.pretty(report).write(to: reportURL)

        endStage("scan")
        // The bag, then (by default) the archive and its signed manifest.
        let contents = try BagWriter.write(
            bagDirectory: bag,
            metadata: BagMetadata(
                sourceOrganization: p.institution, studyID: p.id, createdAt: createdAt, toolVersion: "cohort \(CohortVersion.string)",
                protocolRevision: p.revision, protocolSHA256: pinned.sha256, recipient: recipient))
        endStage("bag")
        // `export.create` names the archive's SHA-256 and commits — after re-checking withdrawals
        // since the snapshot — before any file gets its final name.
        func createDetails(archiveSHA256: String) -> [String: String] {
            [
                "recipient": recipient, "formats": formats.map(\.rawValue).sorted().joined(separator: ","), "participants": String(included.count),
                "records": String(records), "excluded": String(exclusions.values.reduce(0, +)), "archive_sha256": archiveSHA256,
            ]
        }
        var outcome = ExportOutcome(
            bagName: bagName, participants: included.count, records: records, exclusions: exclusions, files: contents.allFiles, report: report)
        if options.archive {
            let published = try ExportPackager.publish(
                bagDirectory: bag, archiveURL: archiveURL, createdAt: createdAt, level: options.compressionLevel,
                signer: ManifestSigner(key: workspace.keystore.signingKey)
            ) { archive in
                try inProgress.commit(included: included, subject: p.id, details: createDetails(archiveSHA256: archive.sha256))
                // The manifest's checkpoint covers the export's own `export.create`.
                guard let checkpoint = try workspace.checkpoint() else {
                    throw CohortError(.integrity, "the audit trail is empty; cannot sign a checkpoint for the manifest")
                }
                return ExportManifest(
                    study: .init(id: p.id, title: p.title), protocolReference: .init(revision: p.revision, sha256: pinned.sha256),
                    policySHA256: context.policySHA256, recipient: recipient, toolVersion: CohortVersion.string, createdAt: createdAt,
                    archive: .init(archive), files: contents.allFiles,
                    exclusions: exclusions.keys.sorted().map { .init(reason: $0, count: exclusions[$0] ?? 0) },
                    signer: .init(keyFingerprint: workspace.keystore.publicKey.fingerprint), auditCheckpoint: checkpoint,
                    kAnonymity: kSummary.map(ExportManifest.KAnonymity.init))
                    .withResidualExceptions(reviewed)
            }
            outcome.archive = published.archive
            outcome.manifestURL = published.signed.manifestURL
            outcome.signatureURL = published.signed.signatureURL
        } else {
            try inProgress.commit(included: included, subject: p.id, details: createDetails(archiveSHA256: "none"))
            try workspace.checkpoint()
            try fm.moveItem(at: bag, to: finalBag)
            try PosixFile.syncDirectory(options.outDirectory.path)
            outcome.bagDirectory = finalBag
        }
        inProgress.published()
        endStage("archive")
        outcome.stages = stages
        return outcome
    }
}
