import CohortCore
import CohortStore
public import Foundation
import CohortDemo
import CohortCompliance
import CohortCrypto
import CohortDeid
import CohortPackage

/// `cohort demo`: a demo study end to end, through the same code paths a coordinator uses.
public struct DemoRun: Sendable {
    /// The demo workspace folder (created; a previous demo there is replaced, anything else is refused).
    public var directory: URL
    /// The seed of the synthetic cohort: the same seed gives the same participants and records.
    public var seed: UInt64
    /// How many synthetic participants to enrol.
    public var participants: Int
    /// Who is acting, recorded in the audit events.
    public var actor: String
    /// The clock (injected so tests are deterministic).
    public var now: @Sendable () -> Date
    /// A folder holding `protocols/` and `templates/` (the CLI passes `ExampleFiles.temporaryCopy()`).
    public var projectRoot: URL
    /// Progress lines for the person watching (stderr).
    public var log: @Sendable (String) -> Void
    /// An empty PostgreSQL database to run the demo on (nil: `study.db` in the workspace).
    public var databaseURL: String?
    /// Where to write the generated import files and keep them (they hold every synthetic
    /// identifier; must be outside the workspace). Nil: a temporary folder deleted after import.
    public var keepImportFilesIn: URL?
    /// Whether a previous demo in ``directory`` may be replaced (default false: it is refused, so
    /// a second run never silently deletes the first one's workspace and exports).
    public var replacesPreviousDemo = false

    /// Whether `directory` holds a previous demo (a folder `cohort demo` made).
    public static func holdsPreviousDemo(_ directory: URL) -> Bool {
        FileManager.default.fileExists(atPath: directory.appendingPathComponent(marker).path)
    }

    /// A demo run; every parameter is the property of the same name.
    public init(directory: URL, seed: UInt64, participants: Int = 50, actor: String, projectRoot: URL, now: @escaping @Sendable () -> Date = { Date() },
        keepImportFilesIn: URL? = nil, log: @escaping @Sendable (String) -> Void = { _ in })
    {
        self.keepImportFilesIn = keepImportFilesIn
        self.directory = directory
        self.seed = seed
        self.participants = participants
        self.actor = actor
        self.projectRoot = projectRoot
        self.now = now
        self.log = log
    }

    static let marker = ".cohort-demo"
    /// The example protocol the demo pins, relative to ``projectRoot``.
    public static let protocolPath = "protocols/axspa-wearables.yaml"

    /// What the demo did, for the summary.
    public struct Summary: Sendable, Codable {
        /// The workspace folder's path.
        public var workspace: String
        /// The pinned protocol's study id.
        public var studyID: String
        /// The pinned protocol's revision.
        public var protocolRevision: Int
        /// The pinned protocol's SHA-256 (hex).
        public var protocolSHA256: String
        /// Participants enrolled.
        public var participants: Int
        /// Data files imported.
        public var filesImported: Int
        /// Records stored by those imports.
        public var recordsImported: Int
        /// Wall-clock seconds the imports took, together.
        public var importSeconds: Double
        /// Events in the audit trail at the end.
        public var auditEvents: Int
        /// True when the audit chain and its signed checkpoints verify.
        public var auditIntact: Bool
        /// True when the demo's export passed `cohort verify`.
        public var exportVerified: Bool
        /// The summary as printed, one line per entry.
        public var lines: [String]
    }

    /// Runs the demo: workspace, roster, consents, imports, withdrawals, compliance, a signed export and its
    /// verification. Throws `CohortError` when the folder is not a previous demo, the import folder lies inside
    /// the workspace, or any step fails.
    public func run() throws -> Summary {
        try checkFolders()
        let workspace = try Workspace.create(
            at: directory, protocolURL: projectRoot.appendingPathComponent(Self.protocolPath), actor: actor, databaseURL: databaseURL, now: now)
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent(Self.marker).path, contents: Data("made by cohort demo\n".utf8))
        let pinned = try workspace.currentProtocol()
        log("Workspace \(directory.path): study \(pinned.studyProtocol.id) revision \(pinned.studyProtocol.revision)")
        let today = CivilDate(now(), in: TimeZone(identifier: "UTC") ?? .current)
        let cohort = DemoCohort(seed: seed, participants: participants, days: pinned.studyProtocol.durationDays, lastDay: today.adding(days: -2))
        let imported = try importCohort(cohort, into: workspace, studyID: pinned.studyProtocol.id)
        var extra = try changeConsents(cohort.people(), enrolled: imported.enrolled, workspace: workspace)
        extra += try complianceLines(workspace, today: today)
        let exported = try exportAndVerify(workspace)
        extra += exported.lines
        let audit = try workspace.store.verifyAudit(publicKey: workspace.keystore.publicKey)
        let seconds = imported.seconds
        let lines = [
            "cohort demo — \(pinned.studyProtocol.title)",
            "  workspace        \(directory.path)",
            "  protocol         \(pinned.studyProtocol.id) revision \(pinned.studyProtocol.revision), sha256 \(pinned.sha256.prefix(16))…",
            "  participants     \(imported.enrolled.count) enrolled (synthetic identities, seed \(seed))",
            "  records          \(imported.records) imported from \(imported.files) files in \(String(format: "%.1f", seconds)) s (\(seconds > 0 ? Int(Double(imported.records) / seconds) : 0) records/s)",
            "  import files     generated in \(imported.directory.path), "
                + (imported.kept ? "kept (--import-files; they hold every synthetic identifier)" : imported.removed ? "deleted after import" : "NOT deleted: remove them yourself"),
        ] + extra + [
            "  audit trail      \(audit.isIntact ? "intact" : "BROKEN"): \(audit.events) events, \(audit.checkpoints) signed checkpoints",
        ]
        return Summary(
            workspace: directory.path, studyID: pinned.studyProtocol.id, protocolRevision: pinned.studyProtocol.revision, protocolSHA256: pinned.sha256,
            participants: imported.enrolled.count, filesImported: imported.files, recordsImported: imported.records, importSeconds: seconds,
            auditEvents: audit.events, auditIntact: audit.isIntact, exportVerified: exported.verified, lines: lines)
    }

    /// Refuses an import folder inside the workspace, and a demo folder that is not a previous
    /// demo (or is one, unless replacing it was confirmed); removes a previous demo.
    private func checkFolders() throws {
        let fm = FileManager.default
        if let kept = keepImportFilesIn {
            let workspacePath = directory.standardizedFileURL.path
            let keptPath = kept.standardizedFileURL.path
            guard keptPath != workspacePath, !keptPath.hasPrefix(workspacePath + "/") else {
                throw CohortError(.invalidInput, "the import files would be inside the demo workspace", at: .init(file: keptPath),
                    hint: "choose a folder outside the workspace (-w): the roster there holds every identifier in clear")
            }
        }
        guard fm.fileExists(atPath: directory.path) else { return }
        let contents = (try? fm.contentsOfDirectory(atPath: directory.path)) ?? []
        guard !contents.isEmpty else { return }
        guard contents.contains(Self.marker) else {
            throw CohortError(.conflict, "the demo folder exists and is not a previous demo", at: .init(file: directory.path),
                hint: "choose another -w/--workspace folder, or remove it yourself")
        }
        guard replacesPreviousDemo else {
            throw CohortError(.conflict, "a previous demo is in this folder; nothing was changed", at: .init(file: directory.path),
                hint: "confirm replacing it (its workspace, keys and exports are deleted), or choose another -w/--workspace folder")
        }
        try fm.removeItem(at: directory)
    }

    /// What the import step did.
    private struct Imported {
        var enrolled: [EnrolledParticipant]
        var files: Int
        var records: Int
        var seconds: Double
        var directory: URL
        var kept: Bool
        var removed: Bool
    }

    /// Writes the cohort's files, enrols the roster, records consent 1.0 for everyone and
    /// imports the data files. The files hold every (synthetic) identifier in clear: they live
    /// in a private temporary folder outside the workspace and are deleted once imported.
    private func importCohort(_ cohort: DemoCohort, into workspace: Workspace, studyID: String) throws -> Imported {
        let fm = FileManager.default
        let importDirectory = keepImportFilesIn ?? fm.temporaryDirectory.appendingPathComponent("cohort-demo-import-\(UUID().uuidString)", isDirectory: true)
        let keep = keepImportFilesIn != nil
        do {
            try fm.createDirectory(at: importDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw CohortError(.system, "cannot create a temporary folder for the demo's import files", at: .init(file: importDirectory.path),
                hint: "check that the temporary folder ($TMPDIR) is writable", underlying: error.localizedDescription)
        }
        defer { if !keep { try? fm.removeItem(at: importDirectory) } }
        let files = try cohort.write(to: importDirectory)
        log("Wrote synthetic roster and \(files.data.count) data files (\(files.records) records) to \(importDirectory.path)\(keep ? "" : " (deleted after import)")")
        let enrolled = try Roster(workspace: workspace).importCSV(files.roster)
        log("Enrolled \(enrolled.count) participants from roster.csv")
        let consents = ConsentService(workspace: workspace)
        let people = cohort.people()
        for person in people {
            let signed = Timestamp.parse("\(person.enrolledOn)T10:00:00", defaultTimeZone: person.zone)
            _ = try consents.record(code: person.code, version: "1.0", signedAt: signed, signature: "typed:\(person.entry.name)",
                sharing: person.code.hasSuffix("3") ? .studyOnly : .broad)
        }
        log("Recorded consent 1.0 for all \(people.count) participants")
        var imported = 0
        var seconds = 0.0
        for file in files.data {
            let result = try RecordImporter(workspace: workspace).importFile(file, studyID: studyID)
            imported += result.inserted
            seconds += result.seconds
            log("Imported \(file.lastPathComponent): \(result.inserted) records")
        }
        if !keep {
            try? fm.removeItem(at: importDirectory)
            log("Deleted the import files (\(importDirectory.path))")
        }
        return Imported(
            enrolled: enrolled, files: files.data.count, records: imported, seconds: seconds, directory: importDirectory, kept: keep,
            removed: !fm.fileExists(atPath: importDirectory.path))
    }

    /// One participant re-consents to the new version; one withdraws with their token (exclude);
    /// one is withdrawn by staff (erase). Returns the summary's lines.
    private func changeConsents(_ people: [DemoCohort.Person], enrolled: [EnrolledParticipant], workspace: Workspace) throws -> [String] {
        var extra: [String] = []
        if let first = people.first {
            _ = try ConsentService(workspace: workspace).record(
                code: first.code, version: "1.1", signedAt: nil, signature: "typed:\(first.entry.name)", sharing: .broad)
            let studyOnly = people.filter { $0.code.hasSuffix("3") }.count
            extra.append(
                "  consent          \(people.count) signed 1.0 (\(people.count - studyOnly) broad, \(studyOnly) study-only sharing); \(first.code) re-consented to 1.1 (broad sharing)")
        }
        guard people.count >= 3 else { return extra }
        let withdrawals = WithdrawalService(workspace: workspace)
        let excluded = people[1].code
        let token = enrolled.first { $0.code == excluded }?.withdrawalToken ?? ""
        let out = try withdrawals.withdraw(code: excluded, mode: .exclude, requester: .participant(token: token), dryRun: false)
        if let text = out.receiptText {
            let url = directory.appendingPathComponent("receipt-\(excluded).txt")
            _ = FileManager.default.createFile(atPath: url.path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        }
        let erased = people[2].code
        let erasedOut = try withdrawals.withdraw(code: erased, mode: .erase, requester: .staff(reason: "participant asked by phone to delete their data"), dryRun: false)
        extra.append("  withdrawals      \(excluded) withdrew with their token (exclude, receipt-\(excluded).txt); \(erased) erased by staff (\(erasedOut.records) records deleted)")
        return extra
    }

    /// The compliance figures, as of noon UTC on the run's date, not the moment: they then depend
    /// only on the seed (the data ends two days before that date), never on the hour of the run.
    private func complianceLines(_ workspace: Workspace, today: CivilDate) throws -> [String] {
        let asOf = Date(timeIntervalSince1970: Double(today.daysSinceEpoch) * 86_400 + 43_200)
        let compliance = try ComplianceService(workspace: workspace).report(asOf: asOf)
        var extra: [String] = []
        for rule in compliance.rules {
            let mean = rule.meanRate.map { String(format: "%.0f%%", $0 * 100) } ?? "N/A"
            let share = rule.shareCompliant.map { String(format: "%.0f%%", $0 * 100) } ?? "N/A"
            extra.append("  compliance       \(rule.ruleID): mean \(mean), \(share) compliant (≥ \(Int(rule.threshold * 100))%), \(rule.notApplicable) N/A")
        }
        extra.append("  reminders        \(compliance.reminders.count) participant(s) to remind (`cohort reminders -w \(directory.path)`)")
        return extra
    }

    /// The main job: a signed, de-identified export for a named recipient, then verified; the
    /// summary's lines and whether verification passed.
    private func exportAndVerify(_ workspace: Workspace) throws -> (verified: Bool, lines: [String]) {
        let recipient = "Example Analytics Core"
        let exportDir = directory.appendingPathComponent("exports", isDirectory: true)
        log("Exporting for \(recipient) (CSV, JSON, FHIR R4) …")
        let export = try ExportJob(workspace: workspace, options: ExportOptions(recipient: recipient, outDirectory: exportDir)).run()
        let publicKey = directory.appendingPathComponent("signing.pub.pem")
        _ = FileManager.default.createFile(atPath: publicKey.path, contents: Data(workspace.keystore.publicKey.pemRepresentation.utf8),
            attributes: [.posixPermissions: 0o644])
        guard let archive = export.archive else { return (false, []) }
        let report = try VerifyService.verify(archive: archive.url, manifest: export.manifestURL, publicKey: workspace.keystore.publicKey, workspace: workspace)
        let checks = report.checks.count
        let excluded = export.exclusions.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        let q = ShellQuote.quote
        return (report.passed, [
            "  export           \(export.participants) participants, \(export.records) records for \(recipient) (left out: \(excluded.isEmpty ? "none" : excluded)); k = \(export.report.kAnonymity?.achievedK.map(String.init) ?? "n/a"); residual PII scan clean",
            "    archive        \(archive.url.path) (\(archive.size / 1024) KiB)",
            "    manifest       \(export.manifestURL?.path ?? "")  (+ .sig)",
            "  verify           \(report.passed ? "passed" : "FAILED"): \(report.checks.filter(\.passed).count) of \(checks) checks (signature, digests, gzip/tar, BagIt, rows, audit checkpoint, consent, residual PII, signer, policy, deliveries)",
            "",
            "Verify it yourself with stock tools:",
            "  openssl pkeyutl -verify -pubin -inkey \(q(publicKey.path)) -rawin \\",
            "    -in \(q(export.manifestURL?.path ?? "")) -sigfile \(q(export.signatureURL?.path ?? ""))",
            "  cohort verify \(q(archive.url.path)) --public-key \(q(publicKey.path))",
            "",
        ])
    }
}
