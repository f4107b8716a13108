/// A plain-text table: a header, a dashed separator, and rows with aligned columns.
///
/// ```
/// code    rule   met/expected  rate
/// ------  -----  ------------  ------
/// P-0001  daily         12/14  85.7 %
/// ```
public struct TextTable: Sendable, Hashable {
    /// How a column's cells line up.
    package enum Alignment: Sendable, Hashable {
        case left
        case right
    }

    /// Column titles.
    public var header: [String]
    /// Cells, row by row; short rows are padded with empty cells.
    public var rows: [[String]]
    /// One alignment per column; missing entries are `.left`.
    package var alignments: [Alignment]

    /// Creates a table.
    package init(header: [String], rows: [[String]] = [], alignments: [Alignment] = []) {
        self.header = header
        self.rows = rows
        self.alignments = alignments
    }

    /// Appends a row.
    public mutating func append(_ row: [String]) { rows.append(row) }

    /// The table as text: one line per row, columns separated by two spaces, no trailing
    /// spaces, ending with a newline.
    public func render() -> String {
        let columns = max(header.count, rows.map(\.count).max() ?? 0)
        guard columns > 0 else { return "" }
        var widths = [Int](repeating: 0, count: columns)
        for row in [header] + rows {
            for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            var parts: [String] = []
            for i in 0..<columns {
                let cell = i < cells.count ? cells[i] : ""
                let padding = String(repeating: " ", count: widths[i] - cell.count)
                let alignment = i < alignments.count ? alignments[i] : .left
                parts.append(alignment == .right ? padding + cell : cell + padding)
            }
            var text = parts.joined(separator: "  ")
            while text.last == " " { text.removeLast() }
            return text
        }
        var output = line(header) + "\n"
        output += widths.map { String(repeating: "-", count: max($0, 1)) }.joined(separator: "  ") + "\n"
        for row in rows { output += line(row) + "\n" }
        return output
    }
}
