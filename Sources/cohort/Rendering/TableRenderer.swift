import CohortKit

/// Renders rows as an aligned text table or as RFC 4180 CSV.
enum TableRenderer {
    static func table(_ header: [String], _ rows: [[String]]) -> String { TextOutput.table(header, rows) }

    static func csv(_ header: [String], _ rows: [[String]]) -> String { TextOutput.csv(header, rows) }

    /// Prints `rows` in `format` (json prints `json` instead).
    static func print(_ format: OutputFormat, header: [String], rows: [[String]], json: () throws -> Void) throws {
        switch format {
        case .table: Console.print(table(header, rows))
        case .csv: Console.print(csv(header, rows))
        case .json: try json()
        }
    }
}
