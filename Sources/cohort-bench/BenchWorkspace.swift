import CohortCore
import CohortKit
import Foundation
import CohortDemo
import CohortStore

/// Where one size's run lives, and the fixed clock that makes it deterministic.
struct BenchWorkspace: Sendable {
    /// The size's folder: `workspace/`, `import/`, `exports/`, `exports-tables/`.
    let root: URL

    static let marker = ".cohort-bench"
    static let actor = "cohort-bench"
    static let recipient = "Benchmark Analytics Core"
    /// Every run happens "at" 2026-07-01 12:00 UTC; the data ends two days before.
    static let now = Date(timeIntervalSince1970: 1_782_907_200)
    static let lastDataDay = CivilDate(daysSinceEpoch: 20_633)  // 2026-06-29

    var workspaceDirectory: URL { root.appendingPathComponent("workspace", isDirectory: true) }
    var importDirectory: URL { root.appendingPathComponent("import", isDirectory: true) }
    var exportDirectory: URL { root.appendingPathComponent("exports", isDirectory: true) }
    /// The CSV + JSON only export's folder (phase `export-tables`).
    var tablesExportDirectory: URL { root.appendingPathComponent("exports-tables", isDirectory: true) }

    func open() throws -> Workspace {
        try Workspace.open(at: workspaceDirectory, actor: Self.actor, now: { Self.now })
    }

    /// The record files to import, in name order (everything but the roster).
    func dataFiles() throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: importDirectory, includingPropertiesForKeys: nil)
            .filter { ["csv", "ndjson"].contains($0.pathExtension) && $0.lastPathComponent != "roster.csv" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    /// The export's archive (the only `.tar.gz` in `exports/`).
    func archive() throws -> URL {
        let archives = try FileManager.default.contentsOfDirectory(at: exportDirectory, includingPropertiesForKeys: nil)
            .filter { $0.lastPathComponent.hasSuffix(".tar.gz") }
        guard archives.count == 1, let archive = archives.first else {
            throw CohortError(.notFound, "expected one archive in the benchmark's exports folder", at: .init(file: exportDirectory.path),
                hint: "run the export phase first")
        }
        return archive
    }

    /// Replaces a previous benchmark folder (never anything else), then creates the workspace,
    /// writes the synthetic cohort's files, enrolls the roster and records everyone's consent.
    ///
    /// - Returns: the number of records written to the data files.
    /// With `databaseURL`, the workspace's study is in that (empty) PostgreSQL database.
    func create(participants: Int, seed: UInt64, projectRoot: URL, databaseURL: String? = nil, heartRateMinutes: [Int] = [0]) throws -> Int {
        let fm = FileManager.default
        if fm.fileExists(atPath: root.path) {
            guard fm.fileExists(atPath: root.appendingPathComponent(Self.marker).path) else {
                throw CohortError(.conflict, "the benchmark folder exists and is not a previous benchmark", at: .init(file: root.path),
                    hint: "choose another --dir, or remove it yourself")
            }
            try fm.removeItem(at: root)
        }
        try fm.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = fm.createFile(atPath: root.appendingPathComponent(Self.marker).path, contents: Data("made by cohort-bench\n".utf8))
        let workspace = try Workspace.create(
            at: workspaceDirectory, protocolURL: projectRoot.appendingPathComponent(DemoRun.protocolPath), actor: Self.actor, databaseURL: databaseURL,
            now: { Self.now })
        let studyProtocol = try workspace.currentProtocol().studyProtocol
        var cohort = DemoCohort(seed: seed, participants: participants, days: studyProtocol.durationDays, lastDay: Self.lastDataDay)
        cohort.heartRateHours = Array(0..<24)
        cohort.heartRateMinutes = heartRateMinutes
        let files = try cohort.write(to: importDirectory)
        _ = try Roster(workspace: workspace).importCSV(files.roster)
        let consents = ConsentService(workspace: workspace)
        for person in cohort.people() {
            let signed = Timestamp.parse("\(person.enrolledOn)T10:00:00", defaultTimeZone: person.zone)
            _ = try consents.record(code: person.code, version: "1.0", signedAt: signed, signature: "typed:\(person.entry.name)", sharing: .broad)
        }
        return files.records
    }
}
