import CohortCore
import Foundation

/// Writes one table as CSV and/or NDJSON, row by row.
final class TableWriter {
    let layout: TableLayout
    private let csv: BufferedFileWriter?
    private let ndjson: BufferedFileWriter?
    private(set) var rows = 0
    /// `"name":` for each column, with the separator before it, built once.
    private let jsonKeys: [[UInt8]]
    /// What each column shows of a record, resolved once.
    private let recordFields: [TableLayout.RecordField]
    /// The row being written, reused row after row.
    private var csvLine: [UInt8] = []
    private var jsonLine: [UInt8] = []

    init(layout: TableLayout, csvDirectory: URL?, jsonDirectory: URL?) throws {
        self.layout = layout
        jsonKeys = layout.columns.enumerated().map { Array((($0.offset == 0 ? "{" : ",") + JSONText.string($0.element.name) + ":").utf8) }
        recordFields = layout.columns.map(TableLayout.RecordField.init(column:))
        csvLine.reserveCapacity(512)
        jsonLine.reserveCapacity(1024)
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
        startRow()
        for (index, cell) in cells.enumerated() { append(cell, column: index) }
        try endRow()
    }

    /// Writes record `r` as one row: what `write(layout.row(r))` writes, without the cell array.
    func write(_ r: DeidentifiedRecord) throws {
        startRow()
        for (index, field) in recordFields.enumerated() { append(TableLayout.cell(field, of: r), column: index) }
        try endRow()
    }

    private func startRow() {
        rows += 1
        csvLine.removeAll(keepingCapacity: true)
        jsonLine.removeAll(keepingCapacity: true)
    }

    private func append(_ cell: Cell, column: Int) {
        if csv != nil {
            if column > 0 { csvLine.append(UInt8(ascii: ",")) }
            cell.appendCSV(to: &csvLine)
        }
        if ndjson != nil {
            jsonLine.append(contentsOf: jsonKeys[column])
            cell.appendJSON(to: &jsonLine)
        }
    }

    private func endRow() throws {
        if let csv {
            csvLine.append(0x0D)
            csvLine.append(0x0A)
            try csv.write(csvLine)
        }
        if let ndjson {
            jsonLine.append(UInt8(ascii: "}"))
            jsonLine.append(0x0A)
            try ndjson.write(jsonLine)
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
