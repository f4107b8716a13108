import CohortDeid
public import Foundation

extension ExportOutcome {
    /// `k = 4 (requested 3)`, or `not requested`.
    public var kAnonymitySummary: String {
        report.kAnonymity.map { "k = \($0.achievedK.map(String.init) ?? "n/a") (requested \($0.requestedK))" } ?? "not requested"
    }

    /// `clean` or how many findings reviewed exceptions covered, then what was scanned and by
    /// which rules, with counts: `clean (12 files; roster forms: 9800 values, 0 findings; unknown
    /// tokens: 3400 free-text values, 0 findings)`.
    public var residualScanSummary: String {
        let covered = report.residualScan?.findingsCount ?? 0
        let outcome = covered == 0 ? "clean" : "\(covered) finding(s) covered by reviewed exceptions (recorded in the manifest)"
        guard let scan = report.residualScan else { return outcome }
        let rules = (scan.ruleCounts ?? []).map(\.description)
        return outcome + " (\(scan.filesScanned) files; " + rules.joined(separator: "; ") + ")"
    }
}

extension ExportOptions {
    /// Reads reviewed exceptions to the residual-PII scan (`--allow FILE`: CSV
    /// `table,column,value_sha256,reviewer,reason` or a YAML list) into ``exceptions``.
    public mutating func loadExceptions(from url: URL) throws {
        exceptions = try ResidualExceptionList.load(url)
    }
}
