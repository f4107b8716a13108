import CohortCore
import CohortKit
import Foundation
import CohortCrypto
import CohortPackage

/// The measured phases. Each runs in its own process (``PhaseCommand``) so that its peak
/// resident memory is its own.
enum BenchPhase: String, CaseIterable, Sendable {
    case `import`
    case export
    case verify
    case verifyScan = "verify-scan"

    var title: String {
        switch self {
        case .import: "import (CSV + NDJSON → SQLite)"
        case .export: "export (CSV, JSON, FHIR → signed tar.gz)"
        case .verify: "verify (signature, digests, bag, rows)"
        case .verifyScan: "verify + residual-PII scan"
        }
    }

    /// Runs the phase in this process.
    func run(in bench: BenchWorkspace, compressionLevel: Int) throws -> PhaseResult {
        let clock = ContinuousClock()
        let start = clock.now
        var result = PhaseResult(
            phase: rawValue, seconds: 0, records: 0, inputBytes: 0, outputBytes: 0, payloadBytes: 0, peakRSSBytes: 0, passed: true, detail: "")
        let workspace = try bench.open()
        switch self {
        case .import:
            for file in try bench.dataFiles() {
                let imported = try RecordImporter(workspace: workspace).importFile(file)
                result.records += imported.inserted
                result.inputBytes += Self.size(file)
            }
            result.outputBytes = ["study.db", "study.db-wal"].reduce(0) { $0 + Self.size(bench.workspaceDirectory.appendingPathComponent($1)) }
        case .export:
            let options = ExportOptions(
                recipient: BenchWorkspace.recipient, outDirectory: bench.exportDirectory, createdAt: BenchWorkspace.now, compressionLevel: compressionLevel)
            let outcome = try ExportJob(workspace: workspace, options: options).run()
            result.records = outcome.records
            result.outputBytes = Int(outcome.archive?.size ?? 0)
            result.payloadBytes = outcome.files.reduce(0) { $0 + Int($1.size) }
            result.detail = "\(outcome.participants) participants, \(outcome.files.count) files; "
                + outcome.stages.map { "\($0.name) \(String(format: "%.1f", $0.seconds)) s" }.joined(separator: ", ")
        case .verify, .verifyScan:
            let archive = try bench.archive()
            let report = try VerifyService.verify(
                archive: archive, manifest: nil, publicKey: workspace.keystore.publicKey, workspace: self == .verifyScan ? workspace : nil)
            result.inputBytes = Self.size(archive)
            result.passed = report.passed
            let failed = report.checks.filter { !$0.passed }.map(\.name)
            result.detail = "\(report.checks.count - failed.count) of \(report.checks.count) checks pass"
                + (failed.isEmpty ? "" : " (failed: \(failed.joined(separator: ", ")))")
        }
        result.seconds = (clock.now - start) / .seconds(1)
        result.peakRSSBytes = PeakMemory.bytes()
        return result
    }

    static func size(_ url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.intValue ?? 0
    }
}
