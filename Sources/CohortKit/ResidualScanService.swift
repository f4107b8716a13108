public import CohortDeid
public import Foundation
import CohortCore
import CohortStore

/// `cohort deid scan`: scans files and folders for any roster participant's identifiers
/// (participant values only; cohort's own fixed-text files in folders are skipped).
public enum ResidualScanService {
    /// Scans `paths` (files or folders) against `workspace`'s roster. A path that does not exist
    /// is a not-found error naming it.
    public static func scan(paths: [URL], workspace: Workspace) throws -> ResidualScanResult {
        let scanner = try workspace.residualScanner()
        var findings: [ResidualFinding] = []
        var skipped: [String] = []
        var files = 0
        var freeText = 0
        var values = 0
        for url in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
                throw CohortError(.notFound, "no such file or folder", at: .init(file: url.path))
            }
            if isDirectory.boolValue {
                let result = try scanner.scan(directory: url)
                findings += result.findings
                skipped += result.filesSkipped
                files += result.filesScanned
                freeText += result.freeTextValues
                values += result.valuesScanned
            } else {
                let result = try scanner.scanResult(files: [url])
                findings += result.findings
                freeText += result.freeTextValues
                values += result.valuesScanned
                files += 1
            }
        }
        return ResidualScanResult(filesScanned: files, filesSkipped: skipped, findings: findings, freeTextValues: freeText, valuesScanned: values)
    }

    /// Column names of ``exceptionRows(_:)``: the exceptions file `cohort export --allow` reads.
    public static let exceptionHeader = ["table", "column", "value_sha256", "reviewer", "reason"]

    /// One row per distinct (table, column, value): the exceptions file a reviewer completes
    /// (reviewer and reason left empty).
    public static func exceptionRows(_ findings: [ResidualFinding]) -> [[String]] {
        var seen: Set<[String]> = []
        var rows: [[String]] = []
        for finding in findings {
            let row = [finding.table, finding.field ?? "", finding.valueSHA256, "", ""]
            if seen.insert(row).inserted { rows.append(row) }
        }
        return rows
    }
}

extension Workspace {
    /// A residual scanner for the identifiers of every participant the store shows, collected
    /// from the roster read through a cursor (never held whole): only the compiled index stays.
    /// In free text it keeps the protocol's own words, as the scrubber does.
    public func residualScanner() throws -> ResidualScanner {
        var identifiers = RosterIdentifiers(for: .scanner)
        try store.forEachParticipant(withIdentities: true) { identifiers.add($0.participant) }
        let scanner = ResidualScanner(identifiers: identifiers)
        guard let pinned = try? currentProtocol() else { return scanner }
        return scanner.keeping(Deidentifier.vocabulary(of: pinned.studyProtocol))
    }
}
