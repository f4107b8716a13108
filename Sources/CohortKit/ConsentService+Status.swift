import CohortCompliance

extension ConsentService {
    /// Every participant's consent status as an aligned table (`consent status`).
    public func statusTable() throws -> String {
        ConsentStatusRow.table(try status()).render()
    }

    /// Every participant's consent status as CSV rows, the header first (`consent status --format csv`).
    public func statusCSV() throws -> [[String]] {
        ConsentStatusRow.csvRows(try status())
    }
}
