import CohortCompliance
import CohortCompression
import CohortCore
import CohortCrypto
import CohortDeid
import CohortExport
import CohortIO
import CohortPackage
import CohortStore
import Foundation
import Synchronization

// The stages of `ExportJob.run()`, in the order it calls them. Each takes what the stages before
// it produced and returns what the next ones need; only `publish` gives files their final names.

/// The request checked against the pinned protocol: who the export is for, in which formats, and
/// the instant it is dated.
struct ExportPlan {
    let pinned: PinnedProtocol
    let recipient: String
    let formats: Set<ExportFormat>
    /// The creation instant as given (compliance is counted as of it).
    let created: Date
    /// The creation instant to the whole second (archive times, file names, date shifting).
    let createdAt: Timestamp
    /// The site the export is limited to; nil for the whole study.
    let site: String?
    /// Who the export is for; consent's sharing scope must allow it.
    let audience: ExportAudience

    var studyProtocol: StudyProtocol { pinned.studyProtocol }

    /// Checks the recipient's name, that the protocol allows every format asked for, and that the
    /// site asked for (if any) has participants.
    init(workspace: Workspace, options: ExportOptions) throws {
        pinned = try workspace.currentProtocol()
        let p = pinned.studyProtocol
        recipient = options.recipient.trimmingCharacters(in: .whitespaces)
        guard recipient.range(of: #"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$"#, options: .regularExpression) != nil else {
            throw CohortError.invalid("expected a recipient name of letters, digits, space, '.', '_' or '-' (at most 64)", field: "recipient")
        }
        formats = options.formats ?? Set(p.export.formats)
        for format in formats where !p.export.formats.contains(format) {
            throw CohortError(.policy, "the protocol does not allow \(format.rawValue) exports", hint: "allowed: \(p.export.formats.map(\.rawValue).joined(separator: ", "))")
        }
        // The auditor recomputes consent from the published consents and participants tables.
        guard formats.contains(.csv) || formats.contains(.json) else {
            throw CohortError(
                .policy, "an export without CSV or JSON tables cannot be checked for consent", at: .init(field: "outputs"),
                hint: "add csv or json to --outputs: auditors recompute consent from consents and participants tables")
        }
        if let gap = p.consentAuditGaps.first {
            throw CohortError(
                .policy, "the pinned protocol does not publish \(gap.field) as '\(gap.transform.rawValue)', which auditors need to check consent",
                at: .init(field: gap.field), hint: "load a protocol revision with '\(gap.field): \(gap.transform.rawValue)' (cohort protocol load)")
        }
        audience = options.audience
        site = try SiteName.parse(options.site, field: "site")
        // A site with no participant is refused before `export.begin` (the snapshot checks again).
        if site != nil { _ = try workspace.participants(site: site) }
        try workspace.checkSigningScope(exportSite: site)
        created = options.createdAt ?? workspace.now()
        createdAt = Timestamp(epochMilliseconds: Int64(created.timeIntervalSince1970.rounded(.down)) * 1000)
    }
}

/// Where the export is built (a hidden staging folder) and where it will be published.
struct ExportStaging {
    let bagName: String
    /// The bag being built, inside the staging folder.
    let bag: URL
    /// The bag's published place (with `archive: false`).
    let finalBag: URL
    /// The archive's published place.
    let archiveURL: URL

    var dataDirectory: URL { bag.appendingPathComponent("data", isDirectory: true) }
    /// The folder of the files deflated as they are written (``DeflateSpool``): in the staging
    /// folder, beside the bag (removed with it).
    var deflateSpool: URL { bag.deletingLastPathComponent().appendingPathComponent(".deflate-spool", isDirectory: true) }
}

/// The roster as read right after `export.begin`: every participant's identifiers for the
/// de-identifier's scrubber, and the participants the export includes.
struct ExportSnapshot {
    /// Every participant's identifiers, collected for the scrubber (taken by de-identify).
    var identifiers: RosterIdentifiers
    /// Active and stopped participants in scope, in roster order, without their identities.
    var included: [StoredParticipant]
    /// Participants left out, by reason.
    var exclusions: [String: Int]
    /// What consent allows of each included participant, by id.
    var coverage: [UUID: ConsentCoverage] = [:]
    /// The consent history each included participant's coverage was decided on, by id: the
    /// export's consents table is written from it, so the table and the decision come from one read.
    var consents: [UUID: [Consent]] = [:]

    /// Hands the identifiers to the scrubber and lets go of them here.
    mutating func takeIdentifiers() -> RosterIdentifiers {
        defer { identifiers = RosterIdentifiers(for: .scrubber) }
        return identifiers
    }
}

/// The included participants de-identified for the recipient, before any record is read.
struct DeidentifiedCohort {
    var deid: Deidentifier
    /// Every participant the snapshot included, before k-anonymity left any out: their rows
    /// together decide what k-anonymity does, so a withdrawal by any of them since the snapshot
    /// refuses the export at publish (``ExportInProgress/commit(included:subject:details:)``).
    let snapshotIncluded: [ExportedParticipant]
    var included: [StoredParticipant]
    /// One de-identified row per entry of `included`.
    var rows: [DeidentifiedParticipant]
    var exclusions: [String: Int]
    var kSummary: KAnonymitySummary?
    /// What consent allows of each included participant, by id.
    let coverage: [UUID: ConsentCoverage]
    /// The consent history of each included participant, by id, as the snapshot read it (``ExportSnapshot/consents``).
    let consents: [UUID: [Consent]]
    /// Kinds whose records k-anonymity over what an acquaintance knows leaves out, by
    /// participant id (``RecordAttributeGeneralizer``); most participants have no entry.
    var leftOutKinds: [UUID: Set<String>] = [:]
}

/// A participant of the export's snapshot: what publishing needs to check withdrawals since the
/// snapshot and to name them if one withdrew (nothing else is kept through the scan).
struct ExportedParticipant {
    let id: UUID
    let code: String

    init(_ stored: StoredParticipant) {
        id = stored.participant.id
        code = stored.participant.code
    }
}

/// What the write stage put into the bag.
struct WrittenExport {
    /// The participants whose data the export holds.
    let included: [ExportedParticipant]
    /// The participants whose withdrawal since the snapshot refuses the export (see
    /// ``DeidentifiedCohort/snapshotIncluded``).
    let withdrawalChecked: [ExportedParticipant]
    let exclusions: [String: Int]
    /// Records consent left out, by `data type: reason`.
    let recordExclusions: [String: Int]
    let kSummary: KAnonymitySummary?
    let records: Int
    let context: ExportContext
    let stats: DeidentificationStats
    /// The written files' sizes, digests and rows, computed as they were written (for the bag).
    let digests: PayloadDigests
    /// The written files deflated as they were written (for the archive; nil without one).
    let deflated: DeflateSpool?
    /// The written files scanned as they were written (for the residual scan).
    let scanned: WrittenFileScan
    /// The files written with no copy in the staging folder, sorted.
    let withoutStagedCopy: [String]
}

/// The residual scan's result with the reviewed exceptions it used.
struct ScannedExport {
    let scan: ResidualScanResult
    let reviewed: [ExportManifest.ReviewedException]
}

/// Wall-clock seconds per named stage, in order (the names the benchmark prints).
struct ExportStageClock {
    private let clock = ContinuousClock()
    private var start: ContinuousClock.Instant
    private(set) var stages: [(name: String, seconds: Double)] = []

    init() { start = clock.now }

    /// Ends the stage running since the previous call (or since `init`).
    mutating func end(_ name: String) {
        let now = clock.now
        stages.append((name, (now - start) / .seconds(1)))
        start = now
    }
}

extension ExportJob {
    /// Reserve: creates the output folder, reserves the bag's name and commits `export.begin`
    /// (two-phase export, see `ExportInProgress`) before anything is read.
    func reserve(_ plan: ExportPlan) throws -> ExportInProgress {
        try FileManager.default.createDirectory(at: options.outDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let p = plan.studyProtocol
        return try ExportInProgress.begin(
            workspace: workspace, studyID: p.id, baseName: BagWriter.bagName(studyID: p.id, createdAt: plan.createdAt),
            outDirectory: options.outDirectory, uniqueName: options.createdAt == nil, archive: options.archive, recipient: plan.recipient,
            site: plan.site)
    }

    /// Stage: the bag's folders in the hidden staging folder; nothing is published until complete.
    func stage(_ inProgress: ExportInProgress) throws -> ExportStaging {
        let bagName = inProgress.bagName
        let staging = ExportStaging(
            bagName: bagName, bag: inProgress.stagingDirectory.appendingPathComponent(bagName, isDirectory: true),
            finalBag: options.outDirectory.appendingPathComponent(bagName, isDirectory: true),
            archiveURL: options.outDirectory.appendingPathComponent(bagName + ".tar.gz"))
        try FileManager.default.createDirectory(at: staging.dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return staging
    }

    /// Snapshot: the roster read after `export.begin` is the export's; withdrawn participants are
    /// counted out. A site-scoped export includes only that site's participants (others are out
    /// of scope, not counted as exclusions), while the scrubber and the residual scan still look
    /// for every participant's identifiers the store shows.
    ///
    /// The roster is read through a cursor and never held whole: each participant's identifiers
    /// go into the scrubber's collection, and the included participants are kept without their
    /// identities (memory per participant is what the export must keep, see docs/performance.md).
    ///
    /// Consent decides the rest (``ConsentRules/exportDecision(for:history:audience:collected:)``):
    /// a participant without a consent in force, with a version the protocol no longer accepts,
    /// or with a sharing scope that does not allow the export's audience is left out and counted
    /// by reason; the coverage of each included participant decides their records at write.
    func takeSnapshot(_ inProgress: ExportInProgress?, plan: ExportPlan) throws -> ExportSnapshot {
        var snapshot = ExportSnapshot(identifiers: RosterIdentifiers(for: .scrubber), included: [], exclusions: [:])
        var sites: Set<String> = []
        var inScope = 0
        let histories = try workspace.store.consentHistories()
        let rules = ConsentRules(studyProtocol: plan.studyProtocol)
        let collected = Set(plan.studyProtocol.dataTypes.keys)
        try workspace.store.forEachParticipant(withIdentities: true) { stored in
            snapshot.identifiers.add(stored.participant)
            if let site = stored.participant.site { sites.insert(site) }
            guard plan.site == nil || stored.participant.site == plan.site else { return }
            inScope += 1
            switch stored.participant.status {
            case .excluded: snapshot.exclusions["withdrawn (exclude)", default: 0] += 1
            case .erased: snapshot.exclusions["withdrawn (erase)", default: 0] += 1
            case .active, .stopped:
                let decision = rules.exportDecision(
                    for: ComplianceSubject(stored.participant), history: histories[stored.participant.id] ?? [], audience: plan.audience,
                    collected: collected)
                switch decision {
                case .leftOut(let reason):
                    snapshot.exclusions[reason.rawValue, default: 0] += 1
                case .included(let coverage):
                    var kept = stored
                    kept.participant.identity = nil
                    snapshot.included.append(kept)
                    snapshot.coverage[stored.participant.id] = coverage
                    snapshot.consents[stored.participant.id] = histories[stored.participant.id] ?? []
                }
            }
        }
        if inProgress != nil { options.afterSnapshot?() }
        if let site = plan.site, inScope == 0 {
            throw CohortError(
                .notFound, "no participant is enrolled at site '\(site)'; nothing was exported", at: .init(field: "site"),
                hint: sites.isEmpty ? "no participant has a site" : "sites: \(sites.sorted().joined(separator: ", "))")
        }
        return snapshot
    }

    /// De-identify: the participants' rows for the recipient (all of them first, for k-anonymity
    /// over the cohort). The scrubber is compiled from the snapshot's identifiers; the rows need
    /// the included participants' birth dates and ZIP codes, so the roster is read through the
    /// cursor once more and each identity is dropped as soon as its row is made. Rows, consents,
    /// records and compliance then use ids, zones and dates only.
    ///
    /// The scrubber is built on a thread of its own (``BackgroundValue``: it waits for the word
    /// lists), and the rows and the k-anonymity pass go on meanwhile unless the policy scrubs
    /// something they publish (``Deidentifier/scrubsBeforeRecordTexts(_:)``); the caller awaits
    /// it (``Deidentifier/awaitScrubber()``) before the write, so a build that failed (the word
    /// lists missing) stops the export there, before anything is written.
    func deidentify(_ snapshot: inout ExportSnapshot, plan: ExportPlan, recipientKey: [UInt8]) throws -> DeidentifiedCohort {
        let identifiers = snapshot.takeIdentifiers()
        let build = BackgroundValue(name: "cohort-export-scrubber") { try Scrubber(identifiers: identifiers) }
        var deid = try Deidentifier(
            studyProtocol: plan.studyProtocol, recipient: plan.recipient, recipientKey: recipientKey,
            shiftKey: try workspace.keystore.dateShiftKey(), scrubberBuild: build,
            referenceDate: plan.createdAt.localDate, createdAt: plan.createdAt)
        if Deidentifier.scrubsBeforeRecordTexts(plan.studyProtocol.deidentification) { try deid.awaitScrubber() }
        let included = snapshot.included
        snapshot.included = []
        var position: [ParticipantHandle: Int] = [:]
        position.reserveCapacity(included.count)
        for (index, stored) in included.enumerated() { position[stored.handle] = index }
        var rows = [DeidentifiedParticipant?](repeating: nil, count: included.count)
        try workspace.store.forEachParticipant(withIdentities: true) { stored in
            guard let index = position[stored.handle] else { return }
            // The snapshot's participant (status, withdrawal) with the identity read now: only an
            // erase changes an identity, and an erase since the snapshot refuses the export.
            var participant = included[index].participant
            participant.identity = stored.participant.identity
            rows[index] = deid.participant(participant)
        }
        // Participants are never deleted (an erase clears them), so each one read at the snapshot is read again.
        guard rows.allSatisfy({ $0 != nil }) else {
            throw CohortError(.conflict, "a participant of the export's snapshot could not be read again; nothing was published", hint: "run the export again")
        }
        return DeidentifiedCohort(
            deid: deid, snapshotIncluded: included.map(ExportedParticipant.init),
            included: included, rows: rows.map { $0! }, exclusions: snapshot.exclusions, kSummary: nil, coverage: snapshot.coverage,
            consents: snapshot.consents)
    }

    /// k-anonymity: generalizes and suppresses the rows' quasi-identifiers; participants that
    /// could not be made k-anonymous are left out entirely (records and consents too), and counted.
    func kAnonymize(_ cohort: inout DeidentifiedCohort, policy: DeidentificationPolicy) throws {
        let before = cohort
        // One read profiles the records both as published now and as they would be in UTC, for
        // the second round below (issue 28: the pass read and probed every record twice).
        let profiles = try recordProfiles(cohort, policy: policy, alsoInUTC: !cohort.deid.publishesTimesInUTC)
        var attributes = recordAttributes(&cohort, policy: policy, profiles: profiles?.asPublished)  // issue 27: k over what an acquaintance knows
        cohort.kSummary = try Self.applyKAnonymity(
            policy: policy, included: &cohort.included, rows: &cohort.rows, exclusions: &cohort.exclusions,
            recordAttributes: attributes.map { ($0.names, $0.values) })
        if attributes != nil, cohort.kSummary?.generalized["utc_offset"] != nil {
            // Every time will be written in UTC: the record attributes (active days) are counted
            // as an acquaintance will count them, on UTC days, and the pass runs again with
            // `utc_offset` held generalized, so what it states is what the files show.
            cohort = before
            cohort.deid.publishesTimesInUTC = true
            let inUTC = try profiles?.inUTC ?? recordProfiles(cohort, policy: policy, alsoInUTC: false)?.asPublished
            attributes = recordAttributes(&cohort, policy: policy, profiles: inUTC)
            cohort.kSummary = try Self.applyKAnonymity(
                policy: policy, included: &cohort.included, rows: &cohort.rows, exclusions: &cohort.exclusions,
                recordAttributes: attributes.map { ($0.names, $0.values) }, timesInUTC: true)
        }
        if let g = attributes?.generalization {
            let kept = Set(cohort.included.map(\.participant.id))
            cohort.leftOutKinds = cohort.leftOutKinds.filter { kept.contains($0.key) }
            cohort.kSummary?.recordKindsLeftOut = cohort.leftOutKinds.values.reduce(0) { $0 + $1.count }
            cohort.kSummary?.deviceClassPublished = g.sourcesPublished
        }
        // A generalized `utc_offset` means every time is published in UTC, not only the column.
        if cohort.kSummary?.generalized["utc_offset"] != nil { cohort.deid.publishesTimesInUTC = true }
    }

    /// Write: streams each participant's consents and records through the de-identifier into the
    /// format writers, and counts compliance as the records go by (written one participant at a
    /// time, in the export form: pseudonyms, no codes, zones or dates).
    func write(_ cohort: inout DeidentifiedCohort, plan: ExportPlan, staging: ExportStaging, scanner: ResidualScanner) throws -> WrittenExport {
        let p = plan.studyProtocol
        let context = ExportContext(
            studyProtocol: p, protocolSHA256: plan.pinned.sha256, policySHA256: try DeidentificationReport.policySHA256(p.deidentification),
            recipient: plan.recipient, createdAt: plan.createdAt, toolVersion: CohortVersion.string, exclusions: cohort.exclusions,
            formats: plan.formats, fhirLayout: options.fhirLayout, fhirTransactions: options.fhirTransactions)
        let digests = PayloadDigests()
        // Files are deflated as they are written (cores the record workers leave idle), so the
        // archive copies them; the spool lives in the staging folder, outside the bag.
        let spool = try options.archive ? DeflateSpool(directory: staging.deflateSpool, level: options.compressionLevel) : nil
        defer { spool?.finishWriting() }
        // And scanned as they are written, on threads of their own (the residual scan's result
        // for each file still on disk as its writer closed it).
        let scan = WrittenFileScan(scanner: scanner)
        defer { scan.cancel() }
        let tapOnly = Mutex<Set<String>>([])
        var taps = (spool.map { digests.taps.and($0.taps) } ?? digests.taps).and(scan.taps)
        if spool != nil, !options.stagesEveryPayloadFile {
            // A file the archive takes from the spool, described by the digests and scanned as
            // written needs no copy in the staging folder (``checkTapOnlyFiles(written:deflated:described:scanned:)``).
            taps = taps.withoutDiskCopy { path in
                guard WrittenFileScan.scansAsWritten(path) else { return false }
                tapOnly.withLock { _ = $0.insert(path) }
                return true
            }
        }
        let writer = try ExportWriter(dataDirectory: staging.dataDirectory, context: context, taps: taps)
        let reports = staging.bag.appendingPathComponent("data/reports", isDirectory: true)
        try FileManager.default.createDirectory(at: reports, withIntermediateDirectories: true)
        let complianceFile = try BufferedFileWriter(url: reports.appendingPathComponent("compliance.json"), relativePath: "data/reports/compliance.json", taps: taps)
        var compliance = try ComplianceExportStream(studyProtocol: p, asOf: plan.created) { try complianceFile.write($0) }
        var tally = RecordTally()
        var workerStats: DeidentificationStats?
        if options.threads > 1 {
            // Records are read (each worker through its own store reader) and de-identified by
            // `RecordWorkers`, and replayed here in participant order (the same rows, in the same
            // order, as one thread writes). The readers close when the workers have ended.
            workerStats = try workspace.store.withRecordReaders(options.threads) { readers in
                let workers = RecordWorkers(
                    readers: readers, included: cohort.included, coverage: cohort.coverage, leftOutKinds: cohort.leftOutKinds, deid: cohort.deid,
                    chunkSize: options.recordChunkSize)
                defer { workers.cancel() }
                try writeParticipants(&cohort, workers: workers, writer: writer, compliance: &compliance, tally: &tally)
                return try workers.finish()
            }
        } else {
            try writeParticipants(&cohort, workers: nil, writer: writer, compliance: &compliance, tally: &tally)
        }
        var stats = cohort.deid.stats
        if let workerStats { stats.merge(workerStats) }
        if cohort.kSummary?.recordKindsLeftOut != nil { cohort.kSummary?.recordsLeftOut = tally.kindRecordsLeftOut }
        _ = try writer.finish(deidentificationSummary: ["participants": cohort.included.count, "records": tally.records])
        try compliance.finish()
        try complianceFile.close()
        scan.finishWriting()
        let withoutCopy = tapOnly.withLock { $0 }
        try Self.checkTapOnlyFiles(
            written: withoutCopy, deflated: spool?.tapOnlyPaths ?? [], described: Set(digests.tapOnlyFiles.map(\.path)),
            scanned: Set(scan.tapOnlyPaths.map { "data/" + $0 }))
        return WrittenExport(
            included: cohort.included.map(ExportedParticipant.init),
            withdrawalChecked: cohort.snapshotIncluded, exclusions: cohort.exclusions, recordExclusions: tally.recordExclusions, kSummary: cohort.kSummary,
            records: tally.records, context: context,
            stats: stats, digests: digests, deflated: spool, scanned: scan, withoutStagedCopy: withoutCopy.sorted())
    }

    /// The payload files written without a copy in the staging folder (``ExportOptions/stagesEveryPayloadFile``)
    /// exist only as what their writers' taps kept: the deflate spool's compressed bytes (the
    /// archive copies them), the digests' description (the bag's manifest) and the residual scan's
    /// result — three views of the one stream of bytes each writer produced, so nothing on disk
    /// can differ from what was described and scanned, and the export writes about 5 % of its
    /// payload to disk (issue 28). A file one of them did not keep whole (a spool write that
    /// failed, a scan cut short) has no other copy: the export stops here, before anything is
    /// published, rather than archive less than the manifest lists.
    static func checkTapOnlyFiles(written: Set<String>, deflated: Set<String>, described: Set<String>, scanned: Set<String>) throws {
        guard written == deflated, written == described, written == scanned else {
            throw CohortError(
                .system, "a payload file was not completely compressed, described and scanned as it was written; nothing was published",
                hint: "check the free space where the export is written, and run the export again")
        }
    }

    /// The write stage's participants, in order: each one's consents and records (from `workers`,
    /// or read and de-identified here when nil) into `writer` and `compliance`.
    private func writeParticipants(
        _ cohort: inout DeidentifiedCohort, workers: RecordWorkers?, writer: ExportWriter, compliance: inout ComplianceExportStream, tally: inout RecordTally
    ) throws {
        for (index, stored) in cohort.included.enumerated() {
            let participant = stored.participant
            guard let coverage = cohort.coverage[participant.id] else {
                throw CohortError(.integrity, "a participant of the export has no consent decision; nothing was published", hint: "run the export again")
            }
            let consents = (cohort.consents[participant.id] ?? []).map { cohort.deid.consent($0, of: participant) }
            try writer.beginParticipant(cohort.rows[index], consents: consents)
            try compliance.begin(ComplianceSubject(participant), pseudonym: cohort.rows[index].pseudonym)
            if let workers {
                try workers.forEachOutcome(of: index) { try tally.replay($0, writer: writer, compliance: &compliance) }
            } else {
                let leftOutKinds = cohort.leftOutKinds[participant.id]
                try workspace.store.forEachRecord(stored.handle, participantID: participant.id) { record in
                    // Consent decides first: a record it does not cover is neither published nor counted;
                    // then k over what an acquaintance knows: a kind left out is not in compliance either.
                    let outcome: RecordOutcome =
                        if let key = coverage.leftOutKey(for: record) {
                            .leftOut(key)
                        } else if leftOutKinds?.contains(record.kind.rawValue) == true {
                            .leftOutKind
                        } else {
                            .covered(CoveredRecord(record), cohort.deid.record(record, of: participant))
                        }
                    try tally.replay(outcome, writer: writer, compliance: &compliance)
                }
            }
            progress?(index + 1, cohort.included.count)
        }
    }

    /// README: the export's `data/README.txt` from the compiled-in template.
    func writeReadme(_ written: WrittenExport, plan: ExportPlan, staging: ExportStaging) throws {
        let readme = try Templates.render(
            Templates.builtIn("export-readme.mustache", fallback: "{{title}}\nDe-identified export for {{recipient}}\n"),
            Templates.studyContext(plan.studyProtocol).merging(
                [
                    "recipient": plan.recipient, "protocol_sha256": plan.pinned.sha256, "created_at": plan.createdAt.iso8601,
                    "tool_version": CohortVersion.string, "participants": written.included.count, "excluded": written.exclusions.values.reduce(0, +),
                    "records": written.records, "bag_name": staging.bagName,
                    "scope": plan.site.map { "site \($0) only (the participants enrolled at that site)" } ?? "the whole study (every site)",
                ], uniquingKeysWith: { $1 }), name: "export-readme.mustache")
        try Data(readme.utf8).write(to: staging.bag.appendingPathComponent("data/README.txt"))
    }

    /// Residual scan: the participant values written so far (cohort's fixed-text files are skipped
    /// by path) against the roster's identifiers — each file from its bytes as they were written
    /// when `written` scanned the version on disk, else read back. Any hit no reviewed exception covers publishes
    /// nothing: `export.refused` is audited and the findings (places and value hashes, never
    /// values) are written next to the output for a reviewer. Exceptions used are audited.
    func residualScan(_ scanner: ResidualScanner, written: WrittenFileScan?, plan: ExportPlan, staging: ExportStaging) throws -> ScannedExport {
        let p = plan.studyProtocol
        var scan = try scanner.scan(directory: staging.dataDirectory, written: written)
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
            // The refusal is audited or the command says it could not be (never lost silently).
            do {
                try workspace.store.appendEvent(
                    actor: workspace.actor, action: "export.refused", details: ["reason": "residual identifiers", "findings": String(refused.count)],
                    at: workspace.now())
            } catch let error as CohortError {
                throw CohortError(
                    error.code, "the residual-PII scan refused the export (nothing was published), and the refusal could not be recorded in the audit trail: \(error.message)",
                    hint: error.hint)
            }
            let advice = refused.prefix(10).map { ResidualScanAdvice.advice(for: $0, policy: p.deidentification) }
            // Completed with reviewer and reason, the findings file is an exceptions list for `--allow`.
            let findingsURL = options.outDirectory.appendingPathComponent(staging.bagName + ".residual-findings.csv")
            var rows = [CSVText.record(["table", "column", "value_sha256", "reviewer", "reason", "file", "line", "kind"])]
            for f in refused.sorted() {
                rows.append(CSVText.record([f.table, f.field ?? "", f.valueSHA256, "", "", f.file, String(f.line), f.kind.rawValue]))
            }
            let wroteFindings = FileManager.default.createFile(
                atPath: findingsURL.path, contents: Data(rows.joined().utf8), attributes: [.posixPermissions: 0o600])
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
                    "bag": staging.bagName, "exceptions": String(reviewed.count), "findings": String(scan.findings.count),
                    "value_sha256": reviewed.map(\.valueSHA256).joined(separator: ","),
                    "fields": reviewed.map { "\($0.table).\($0.column)" }.joined(separator: ","),
                    "reviewers": Set(reviewed.map(\.reviewer)).sorted().joined(separator: ","),
                ], at: workspace.now())
        }
        // The report lists the excepted findings (places, kinds and hashes; no values).
        scan.findings = scan.findings.sorted()
        return ScannedExport(scan: scan, reviewed: reviewed)
    }

    /// Report: `data/reports/deidentification.json` (policy, statistics, key fingerprints,
    /// k-anonymity, residual scan).
    func writeReport(_ written: WrittenExport, _ scanned: ScannedExport, plan: ExportPlan, recipientKey: [UInt8], staging: ExportStaging) throws
        -> DeidentificationReport
    {
        var fingerprints = ["signing": workspace.keystore.fingerprints.signing, "study_secret": workspace.keystore.fingerprints.studySecret]
        fingerprints["recipient_key"] = "SHA256:" + SHA256.hex(Array("cohort/fingerprint/recipient/v1".utf8) + [0] + recipientKey)
        var report = try DeidentificationReport(
            studyProtocol: plan.studyProtocol, recipient: plan.recipient, stats: written.stats, keyFingerprints: fingerprints,
            kAnonymity: written.kSummary, residualScan: scanned.scan)
        // Withdrawals and consent reasons: the k-anonymity suppression is in its own section.
        report.consent = .init(
            audience: plan.audience.rawValue, participantsLeftOut: written.exclusions.filter { !$0.key.contains("k-anonymity") },
            recordsLeftOut: written.recordExclusions)
        try CanonicalJSON.pretty(report).write(to: staging.bag.appendingPathComponent("data/reports/deidentification.json"))
        return report
    }

    /// Bag: BagIt manifests, digests and row counts over everything written — those the writers
    /// computed as they wrote (for files unchanged since), the others by reading the files.
    func bag(_ written: WrittenExport, plan: ExportPlan, staging: ExportStaging) throws -> BagContents {
        let p = plan.studyProtocol
        return try BagWriter.write(
            bagDirectory: staging.bag,
            metadata: BagMetadata(
                sourceOrganization: p.institution, studyID: p.id, createdAt: plan.createdAt, toolVersion: "cohort \(CohortVersion.string)",
                protocolRevision: p.revision, protocolSHA256: plan.pinned.sha256, recipient: plan.recipient),
            digests: written.digests)
    }

    /// Archive, sign and publish: `export.create` names the archive's SHA-256 and commits — after
    /// re-checking withdrawals since the snapshot — before any file gets its final name; the
    /// manifest's checkpoint covers that event. With `archive: false` the bag itself is published.
    func publish(
        _ written: WrittenExport, _ scanned: ScannedExport, report: DeidentificationReport, contents: BagContents, plan: ExportPlan,
        staging: ExportStaging, inProgress: ExportInProgress
    ) throws -> ExportOutcome {
        let p = plan.studyProtocol
        var outcome = ExportOutcome(
            bagName: staging.bagName, participants: written.included.count, records: written.records, exclusions: written.exclusions,
            files: contents.allFiles, report: report)
        outcome.recordExclusions = written.recordExclusions
        outcome.audience = plan.audience
        outcome.scannedWhileWritten = scanned.scan.filesScannedAsWritten
        outcome.writtenWithoutStagedCopy = written.withoutStagedCopy
        if options.archive {
            let published = try ExportPackager.publish(
                bagDirectory: staging.bag, archiveURL: staging.archiveURL, createdAt: plan.createdAt, level: options.compressionLevel,
                signer: ManifestSigner(key: workspace.keystore.signingKey, site: try workspace.signingScope()?.site), encryption: options.encryption,
                deflated: written.deflated
            ) { archive in
                try inProgress.commit(included: written.withdrawalChecked, subject: p.id, details: Self.createDetails(written, plan: plan, archive: archive))
                return try manifest(written, scanned, contents: contents, plan: plan, archive: archive)
            }
            outcome.archive = published.archive
            outcome.deflatedWhileWritten = written.deflated?.usedPaths ?? []
            outcome.manifestURL = published.signed.manifestURL
            outcome.signatureURL = published.signed.signatureURL
        } else {
            try inProgress.commit(included: written.withdrawalChecked, subject: p.id, details: Self.createDetails(written, plan: plan, archive: nil))
            try workspace.checkpoint()
            try FileManager.default.moveItem(at: staging.bag, to: staging.finalBag)
            try PosixFile.syncDirectory(options.outDirectory.path)
            outcome.bagDirectory = staging.finalBag
        }
        inProgress.published()
        return outcome
    }

    /// The details of `export.create`: what the trail commits to (counts by reason only, the same
    /// as the manifest says), with the archive's digests (`none` when the bag is published as is).
    private static func createDetails(_ written: WrittenExport, plan: ExportPlan, archive: ArchiveResult?) -> [String: String] {
        let exclusions = written.exclusions
        var details = [
            "recipient": plan.recipient, "formats": plan.formats.map(\.rawValue).sorted().joined(separator: ","),
            "participants": String(written.included.count), "records": String(written.records),
            "excluded": String(exclusions.values.reduce(0, +)), "archive_sha256": archive?.sha256 ?? "none", "audience": plan.audience.rawValue,
        ]
        for reason in ExportConsentReason.allCases where exclusions[reason.rawValue] != nil {
            details["excluded_" + reason.rawValue.replacingOccurrences(of: " ", with: "_")] = String(exclusions[reason.rawValue] ?? 0)
        }
        let leftOutRecords = written.recordExclusions.values.reduce(0, +)
        if leftOutRecords > 0 { details["records_not_consented"] = String(leftOutRecords) }
        if let site = plan.site { details["site"] = site }
        if let encrypted = archive?.encrypted {
            details["encrypted_sha256"] = encrypted.sha256
            details["recipient_certificates"] = encrypted.recipients.map(\.certificateSHA256).joined(separator: ",")
        }
        return details
    }

    /// The manifest signed for `archive`, after `export.create` is committed: its checkpoint
    /// covers the export's own `export.create`.
    private func manifest(
        _ written: WrittenExport, _ scanned: ScannedExport, contents: BagContents, plan: ExportPlan, archive: ArchiveResult
    ) throws -> ExportManifest {
        let p = plan.studyProtocol
        let exclusions = written.exclusions
        guard let checkpoint = try workspace.checkpoint() else {
            throw CohortError(.integrity, "the audit trail is empty; cannot sign a checkpoint for the manifest")
        }
        var manifest = ExportManifest(
            study: .init(id: p.id, title: p.title), protocolReference: .init(revision: p.revision, sha256: plan.pinned.sha256),
            policySHA256: written.context.policySHA256, recipient: plan.recipient, toolVersion: CohortVersion.string,
            createdAt: plan.createdAt, archive: .init(archive), files: contents.allFiles,
            exclusions: exclusions.keys.sorted().map { .init(reason: $0, count: exclusions[$0] ?? 0) },
            signer: .init(keyFingerprint: workspace.keystore.publicKey.fingerprint, site: try workspace.signingScope()?.site), auditCheckpoint: checkpoint,
            kAnonymity: written.kSummary.map(ExportManifest.KAnonymity.init))
            .withResidualExceptions(scanned.reviewed)
        manifest.site = plan.site
        manifest.residualScan = ExportManifest.ResidualScan(
            filesScanned: scanned.scan.filesScanned, valuesScanned: scanned.scan.valuesScanned,
            freeTextValues: scanned.scan.freeTextValues,
            rules: scanned.scan.ruleCounts.map { .init(rule: $0.rule, scope: $0.scope, valuesChecked: $0.valuesChecked, findings: $0.findings) })
        manifest.consent = ExportManifest.ConsentBasis(studyProtocol: p, audience: plan.audience, recordExclusions: written.recordExclusions)
        return manifest
    }
}

/// What the write stage counts as it replays records: rows written, records consent left out
/// (by `data type: reason`), and records of kinds left out for k.
private struct RecordTally {
    var records = 0
    var recordExclusions: [String: Int] = [:]
    var kindRecordsLeftOut = 0

    /// Counts `outcome`; a covered record goes into compliance and, unless dated after the
    /// publication horizon, its row to `writer`.
    mutating func replay(_ outcome: consuming RecordOutcome, writer: ExportWriter, compliance: inout ComplianceExportStream) throws {
        switch consume outcome {
        case .leftOut(let key):
            recordExclusions[key, default: 0] += 1
        case .leftOutKind:
            kindRecordsLeftOut += 1
        case .covered(let record, let row):
            compliance.add(kind: record.kind, start: record.start, end: record.end, value: record.value, source: record.source)
            guard let row else { return }  // dated after createdAt
            try writer.write(row, rankingSource: record.source)
            records += 1
        }
    }
}
