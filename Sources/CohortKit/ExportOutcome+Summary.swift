import CohortDeid
public import Foundation

extension ExportOutcome {
    /// `k = 4 (requested 3)`, or `not requested`.
    public var kAnonymitySummary: String {
        report.kAnonymity.map { "k = \($0.achievedK.map(String.init) ?? "n/a") (requested \($0.requestedK))" } ?? "not requested"
    }

    /// `clean` or how many findings reviewed exceptions covered, then what was scanned and by
    /// which rules: `clean (12 files, 3400 free-text values; roster forms in every value, unknown
    /// tokens in free text)`.
    public var residualScanSummary: String {
        let covered = report.residualScan?.findingsCount ?? 0
        let outcome = covered == 0 ? "clean" : "\(covered) finding(s) covered by reviewed exceptions (recorded in the manifest)"
        guard let scan = report.residualScan else { return outcome }
        return outcome + " (\(scan.filesScanned) files, \(scan.freeTextValues ?? 0) free-text values; roster forms in every value, unknown tokens in free text)"
    }
}

extension ExportOptions {
    /// Reads reviewed exceptions to the residual-PII scan (`--allow FILE`: CSV
    /// `table,column,value_sha256,reviewer,reason` or a YAML list) into ``exceptions``.
    public mutating func loadExceptions(from url: URL) throws {
        exceptions = try ResidualExceptionList.load(url)
    }
}
