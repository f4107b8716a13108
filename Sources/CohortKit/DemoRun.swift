import CohortCore
import CohortStore
public import Foundation

/// `cohort demo`: a demo study end to end, through the same code paths a coordinator uses.
public struct DemoRun: Sendable {
    public var directory: URL
    public var seed: UInt64
    public var participants: Int
    public var actor: String
    public var now: @Sendable () -> Date
    /// Where `protocols/` and `templates/` are (the project root).
    public var projectRoot: URL
    /// Progress lines for the person watching (stderr).
    public var log: @Sendable (String) -> Void

    public init(directory: URL, seed: UInt64, participants: Int = 50, actor: String, projectRoot: URL, now: @escaping @Sendable () -> Date = { Date() },
        log: @escaping @Sendable (String) -> Void = { _ in })
    {
        self.directory = directory
        self.seed = seed
        self.participants = participants
        self.actor = actor
        self.projectRoot = projectRoot
        self.now = now
        self.log = log
    }

    static let marker = ".cohort-demo"
    public static let protocolPath = "protocols/axspa-wearables.yaml"

    /// Finds the project root (the folder holding protocols/ and templates/) from `start` upwards.
    public static func findProjectRoot(from starts: [URL]) -> URL? {
        for start in starts {
            var url = start.standardizedFileURL
            for _ in 0..<8 {
                if FileManager.default.fileExists(atPath: url.appendingPathComponent(protocolPath).path) { return url }
                let parent = url.deletingLastPathComponent()
                if parent.path == url.path { break }
                url = parent
            }
        }
        return nil
    }

    /// What the demo did, for the summary.
    public struct Summary: Sendable, Codable {
        public var workspace: String
        public var studyID: String
        public var protocolRevision: Int
        public var protocolSHA256: String
        public var participants: Int
        public var filesImported: Int
        public var recordsImported: Int
        public var importSeconds: Double
        public var auditEvents: Int
        public var auditIntact: Bool
        public var lines: [String]
    }

    public func run() throws -> Summary {
        let fm = FileManager.default
        if fm.fileExists(atPath: directory.path) {
            let contents = (try? fm.contentsOfDirectory(atPath: directory.path)) ?? []
            if !contents.isEmpty {
                guard contents.contains(Self.marker) else {
                    throw CohortError(.conflict, "the demo folder exists and is not a previous demo", at: .init(file: directory.path),
                        hint: "choose another --dir, or remove it yourself")
                }
                try fm.removeItem(at: directory)
            }
        }
        let workspace = try Workspace.create(
            at: directory, protocolURL: projectRoot.appendingPathComponent(Self.protocolPath), actor: actor, now: now)
        _ = fm.createFile(atPath: directory.appendingPathComponent(Self.marker).path, contents: Data("made by cohort demo\n".utf8))
        let pinned = try workspace.currentProtocol()
        log("Workspace \(directory.path): study \(pinned.studyProtocol.id) revision \(pinned.studyProtocol.revision)")
        let today = CivilDate(now(), in: TimeZone(identifier: "UTC") ?? .current)
        let cohort = DemoCohort(seed: seed, participants: participants, days: pinned.studyProtocol.durationDays, lastDay: today.adding(days: -2))
        let files = try cohort.write(to: directory.appendingPathComponent("import", isDirectory: true))
        log("Wrote synthetic roster and \(files.data.count) data files (\(files.records) records) to \(directory.path)/import")
        let enrolled = try Roster(workspace: workspace).importCSV(files.roster)
        log("Enrolled \(enrolled.count) participants from roster.csv")
        var imported = 0
        var seconds = 0.0
        for file in files.data {
            let result = try RecordImporter(workspace: workspace).importFile(file, studyID: pinned.studyProtocol.id)
            imported += result.inserted
            seconds += result.seconds
            log("Imported \(file.lastPathComponent): \(result.inserted) records")
        }
        let audit = try workspace.store.verifyAudit(publicKey: workspace.keystore.publicKey)
        let lines = [
            "cohort demo — \(pinned.studyProtocol.title)",
            "  workspace        \(directory.path)",
            "  protocol         \(pinned.studyProtocol.id) revision \(pinned.studyProtocol.revision), sha256 \(pinned.sha256.prefix(16))…",
            "  participants     \(enrolled.count) enrolled (synthetic identities, seed \(seed))",
            "  records          \(imported) imported from \(files.data.count) files in \(String(format: "%.1f", seconds)) s (\(seconds > 0 ? Int(Double(imported) / seconds) : 0) records/s)",
            "  audit trail      \(audit.isIntact ? "intact" : "BROKEN"): \(audit.events) events, \(audit.checkpoints) signed checkpoints",
        ]
        return Summary(
            workspace: directory.path, studyID: pinned.studyProtocol.id, protocolRevision: pinned.studyProtocol.revision, protocolSHA256: pinned.sha256,
            participants: enrolled.count, filesImported: files.data.count, recordsImported: imported, importSeconds: seconds, auditEvents: audit.events,
            auditIntact: audit.isIntact, lines: lines)
    }
}
