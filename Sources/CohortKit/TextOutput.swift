import CohortCompliance
import CohortCore

/// Plain-text renderings the use cases' results share with the `cohort` executable: an aligned
/// table and RFC 4180 CSV. The table renderer (`TextTable`) stays in CohortCompliance, whose
/// compliance and consent reports render with it too; this is its one door for callers of CohortKit.
public enum TextOutput {
    /// An aligned text table: the header, a rule, one line per row.
    public static func table(_ header: [String], _ rows: [[String]]) -> String {
        TextTable(header: header, rows: rows).render()
    }

    /// RFC 4180 CSV: the header record, then one record per row (CRLF line ends as CSVText writes them).
    public static func csv(_ header: [String], _ rows: [[String]]) -> String {
        ([header] + rows).map(CSVText.record).joined()
    }

    /// A fraction such as `0.8` or a percentage such as `80%` as a rate in 0…1 (`--below`).
    public static func rate(_ text: String) throws -> Double {
        try ComplianceReport.parseRate(text)
    }
}
