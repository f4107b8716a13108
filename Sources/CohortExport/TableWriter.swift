import CohortCore
import Foundation

/// Writes one table as CSV and/or NDJSON, row by row.
final class TableWriter {
    let layout: TableLayout
    private let csv: BufferedFileWriter?
    private let ndjson: BufferedFileWriter?
    private(set) var rows = 0
    /// `"name":` for each column, with the separator before it, built once.
    private let jsonKeys: [String]

    init(layout: TableLayout, csvDirectory: URL?, jsonDirectory: URL?) throws {
        self.layout = layout
        jsonKeys = layout.columns.enumerated().map { ($0.offset == 0 ? "{" : ",") + JSONText.string($0.element.name) + ":" }
        if let csvDirectory {
            let writer = try BufferedFileWriter(
                url: csvDirectory.appendingPathComponent(layout.name + ".csv"), relativePath: "data/csv/\(layout.name).csv")
            try writer.write(CSVText.record(layout.columns.map(\.name)))
            csv = writer
        } else {
            csv = nil
        }
        if let jsonDirectory {
            ndjson = try BufferedFileWriter(
                url: jsonDirectory.appendingPathComponent(layout.name + ".ndjson"), relativePath: "data/json/\(layout.name).ndjson")
        } else {
            ndjson = nil
        }
    }

    /// Writes one row; `cells` line up with `layout.columns`.
    func write(_ cells: [Cell]) throws {
        rows += 1
        if let csv { try csv.write(CSVText.record(cells.map(\.csvText))) }
        if let ndjson {
            var line = ""
            for index in jsonKeys.indices {
                line += jsonKeys[index]
                line += cells[index].jsonText
            }
            line += "}\n"
            try ndjson.write(line)
        }
    }

    /// Closes the files and describes them.
    func finish() throws -> [ExportedFile] {
        var files: [ExportedFile] = []
        for writer in [csv, ndjson].compactMap({ $0 }) {
            try writer.close()
            files.append(ExportedFile(path: writer.relativePath, rows: rows, bytes: writer.bytesWritten))
        }
        return files
    }
}
