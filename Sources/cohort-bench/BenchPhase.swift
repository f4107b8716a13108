import CohortCore
import CohortKit
import Foundation
import CohortCrypto
import CohortPackage
import CohortPostgres

/// The measured phases. Each runs in its own process (``PhaseCommand``) so that its peak
/// resident memory is its own.
enum BenchPhase: String, CaseIterable, Sendable {
    case `import`
    /// The export with CSV and JSON only (`cohort export --outputs csv,json`): the tables the
    /// auditor recomputes consent from, without FHIR — the figure issue 28 compares.
    case exportTables = "export-tables"
    case export
    case verify
    case verifyScan = "verify-scan"

    var title: String {
        switch self {
        case .import: "import (CSV + NDJSON → store)"
        case .exportTables: "export CSV + JSON only (→ signed tar.gz)"
        case .export: "export (CSV, JSON, FHIR → signed tar.gz)"
        case .verify: "verify (signature, digests, bag, rows)"
        case .verifyScan: "verify + residual-PII scan"
        }
    }

    /// What the phase's progress line counts, and its label.
    var progressUnit: ProgressLine.Unit {
        switch self {
        case .import: "records"
        case .exportTables, .export: "participants"
        case .verify, .verifyScan: .bytes
        }
    }

    /// Runs the phase in this process. With `showingProgress`, a progress line for the phase is
    /// drawn on stderr (records of `expectedRecords` when known, participants, or archive bytes);
    /// without it no hook is installed at all, so the measured work is the same as before.
    func run(in bench: BenchWorkspace, compressionLevel: Int, expectedRecords: Int? = nil, threads: Int? = nil, showingProgress: Bool = false) throws
        -> PhaseResult
    {
        let bar = ProgressBar(rawValue, unit: progressUnit, total: self == .import ? expectedRecords : nil, enabled: showingProgress)
        defer { bar.finish() }
        let clock = ContinuousClock()
        let start = clock.now
        let cpuAtStart = ProcessCPU.seconds()
        var result = PhaseResult(
            phase: rawValue, seconds: 0, records: 0, inputBytes: 0, outputBytes: 0, payloadBytes: 0, peakRSSBytes: 0, passed: true, detail: "")
        let workspace = try bench.open()
        switch self {
        case .import:
            var rowsBefore = 0
            for file in try bench.dataFiles() {
                let offset = rowsBefore
                var progress: (@Sendable (Int) -> Void)?
                if showingProgress { progress = { (rows: Int) in bar.update(offset + rows) } }
                let importer = RecordImporter(workspace: workspace, progress: progress, threads: threads ?? RecordImporter.defaultThreads)
                let imported = try importer.importFile(file)
                rowsBefore += imported.rows
                bar.update(rowsBefore)
                result.records += imported.inserted
                result.inputBytes += Self.size(file)
            }
            result.outputBytes = try Self.databaseBytes(bench)
            let validators = threads ?? RecordImporter.defaultThreads
            result.detail = validators == 1 ? "rows validated on the reading thread" : "rows validated on \(validators) threads"
        case .exportTables, .export:
            // Dated 200 days after the data: past the shipped protocols' embargo (max_days, 182), so
            // every record is published and both stores (and every run) export the same work.
            // The two exports publish into their own folders (same instant, same bag name).
            var options = ExportOptions(
                recipient: BenchWorkspace.recipient, formats: self == .exportTables ? [.csv, .json] : nil,
                outDirectory: self == .exportTables ? bench.tablesExportDirectory : bench.exportDirectory,
                createdAt: BenchWorkspace.now.addingTimeInterval(200 * 86_400), compressionLevel: compressionLevel)
            if let threads { options.threads = threads }
            var progress: (@Sendable (Int, Int) -> Void)?
            if showingProgress { progress = { (done: Int, total: Int) in bar.update(done, total: total) } }
            let outcome = try ExportJob(workspace: workspace, options: options, progress: progress).run()
            result.records = outcome.records
            result.outputBytes = Int(outcome.archive?.size ?? 0)
            result.payloadBytes = outcome.files.reduce(0) { $0 + Int($1.size) }
            result.detail = "\(outcome.participants) participants, \(outcome.files.count) files; \(options.threads) record thread\(options.threads == 1 ? "" : "s"); "
                + outcome.stages.map { "\($0.name) \(String(format: "%.1f", $0.seconds)) s" }.joined(separator: ", ")
                + "; \(outcome.deflatedWhileWritten.count) files deflated and \(outcome.scannedWhileWritten) scanned as written, "
                + "\(outcome.writtenWithoutStagedCopy.count) with no staged copy"
        case .verify, .verifyScan:
            let archive = try bench.archive()
            var progress: (@Sendable (UInt64, UInt64) -> Void)?
            if showingProgress { progress = { (read: UInt64, total: UInt64) in bar.update(Int(read), total: Int(total)) } }
            let report = try VerifyService.verify(
                archive: archive, manifest: nil, publicKey: workspace.keystore.publicKey, workspace: self == .verifyScan ? workspace : nil,
                progress: progress)
            result.inputBytes = Self.size(archive)
            result.passed = report.passed
            let failed = report.checks.filter { !$0.passed }.map(\.name)
            result.detail = "\(report.checks.count - failed.count) of \(report.checks.count) checks pass"
                + (failed.isEmpty ? "" : " (failed: \(failed.joined(separator: ", ")))")
        }
        result.seconds = (clock.now - start) / .seconds(1)
        result.cpuSeconds = ProcessCPU.seconds() - cpuAtStart
        result.peakRSSBytes = PeakMemory.bytes()
        return result
    }

    /// The study database's size on disk: study.db with its WAL, or `pg_database_size`.
    static func databaseBytes(_ bench: BenchWorkspace) throws -> Int {
        guard let configuration = try StoreConfiguration.load(from: bench.workspaceDirectory) else {
            return ["study.db", "study.db-wal"].reduce(0) { $0 + size(bench.workspaceDirectory.appendingPathComponent($1)) }
        }
        let rows = try PostgresConnection(url: configuration.url).query("SELECT pg_database_size(current_database())")
        return (rows.first?.first ?? nil).flatMap { Int($0) } ?? 0
    }

    static func size(_ url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.intValue ?? 0
    }
}
