import CohortCore
import Foundation
import CohortIO

/// Writes one table as CSV and/or NDJSON, row by row.
final class TableWriter {
    let layout: TableLayout
    private let csv: BufferedFileWriter?
    private let ndjson: BufferedFileWriter?
    private(set) var rows = 0
    /// `"name":` for each column, with the separator before it, built once: the bytes of all
    /// columns one after another, column `i`'s at `jsonKeyRanges[i]` (one flat buffer, so a key
    /// is appended as a slice of raw bytes). The writer owns these buffers (freed in `deinit`):
    /// reading an array property costs a retain and a release per key (issue 28).
    private let jsonKeyBytes: UnsafeMutableBufferPointer<UInt8>
    private let jsonKeyRanges: UnsafeMutableBufferPointer<Range<Int>>
    /// What each column shows of a record, resolved once (owned, like the keys).
    private let recordFields: UnsafeMutableBufferPointer<TableLayout.RecordField>
    /// Whether the table is written as CSV, as NDJSON: plain flags, read per value (a test of the
    /// optional file writer for nil retained and released it).
    private let writesCSV: Bool
    private let writesJSON: Bool
    /// The rows written but not yet handed to the files, reused batch after batch: a batch is
    /// handed over once it reaches ``batchBytes``, the file writer's capacity, so the file
    /// writer passes it straight to the operating system rather than copying each row into
    /// its own buffer (and the per-row costs of a hand-over are paid per batch).
    private var csvLine: [UInt8] = []
    private var jsonLine: [UInt8] = []
    private static let batchBytes = BufferedFileWriter.capacity

    init(layout: TableLayout, csvDirectory: URL?, jsonDirectory: URL?, taps: FileWriteTaps? = nil) throws {
        self.layout = layout
        var keyBytes: [UInt8] = []
        var keyRanges: [Range<Int>] = []
        for (index, column) in layout.columns.enumerated() {
            let start = keyBytes.count
            keyBytes += Array(((index == 0 ? "{" : ",") + JSONText.string(column.name) + ":").utf8)
            keyRanges.append(start..<keyBytes.count)
        }
        jsonKeyBytes = Self.owned(keyBytes)
        jsonKeyRanges = Self.owned(keyRanges)
        recordFields = Self.owned(layout.columns.map(TableLayout.RecordField.init(column:)))
        writesCSV = csvDirectory != nil
        writesJSON = jsonDirectory != nil
        if let csvDirectory {
            let writer = try BufferedFileWriter(
                url: csvDirectory.appendingPathComponent(layout.name + ".csv"), relativePath: "data/csv/\(layout.name).csv", taps: taps)
            try writer.write(CSVText.record(layout.columns.map(\.name)))
            csv = writer
        } else {
            csv = nil
        }
        if let jsonDirectory {
            ndjson = try BufferedFileWriter(
                url: jsonDirectory.appendingPathComponent(layout.name + ".ndjson"), relativePath: "data/json/\(layout.name).ndjson", taps: taps)
        } else {
            ndjson = nil
        }
    }

    deinit {
        jsonKeyBytes.deallocate()
        jsonKeyRanges.deallocate()
        recordFields.deinitialize().deallocate()
    }

    /// A buffer of its own holding `elements`.
    private static func owned<Element>(_ elements: [Element]) -> UnsafeMutableBufferPointer<Element> {
        let buffer = UnsafeMutableBufferPointer<Element>.allocate(capacity: elements.count)
        _ = buffer.initialize(from: elements)
        return buffer
    }

    /// Writes one row; `cells` line up with `layout.columns`.
    func write(_ cells: [Cell]) throws {
        var (csvBytes, jsonBytes) = takeLineBuffers()
        defer { giveBack(&csvBytes, &jsonBytes) }
        for (index, cell) in cells.enumerated() { append(cell, column: index, csv: &csvBytes, json: &jsonBytes) }
        try endRow(csv: &csvBytes, json: &jsonBytes)
    }

    /// Writes record `r` as one row: what `write(layout.row(r))` writes, without the cell array
    /// and without a ``Cell`` per value (each would copy, retain and release the record's
    /// strings); the bytes are those of `Cell`'s appends, as `TableWriterTests` checks. The row
    /// is built here rather than in a closure: a closure capturing `r` copied the whole record
    /// (issue 28, ninth round).
    func write(_ r: DeidentifiedRecord) throws {
        try withUnsafePointer(to: r) { try write(record: $0) }
    }

    /// ``write(_:)`` for the record at `r`, read in place: the export's table worker passes the
    /// records of its batch this way. A record passed by value, even `borrowing`, was copied
    /// first — a retain of each of its strings, and their releases after (issue 28, seventeenth
    /// round: 1.5 % of the CSV + JSON export's CPU in the record's copy and destruction).
    func write(record r: UnsafePointer<DeidentifiedRecord>) throws {
        var (csvBytes, jsonBytes) = takeLineBuffers()
        defer { giveBack(&csvBytes, &jsonBytes) }
        for index in recordFields.indices {
            append(recordFields[index], of: r, column: index, csv: &csvBytes, json: &jsonBytes)
        }
        try endRow(csv: &csvBytes, json: &jsonBytes)
    }

    /// The row buffers (kept with their capacity from row to row), taken out so a row can be
    /// built in them while the writer's other methods are called; ``giveBack(_:_:)`` returns them.
    private func takeLineBuffers() -> (csv: [UInt8], json: [UInt8]) {
        var taken: (csv: [UInt8], json: [UInt8]) = ([], [])
        swap(&taken.csv, &csvLine)
        swap(&taken.json, &jsonLine)
        return taken
    }

    private func giveBack(_ csvBytes: inout [UInt8], _ jsonBytes: inout [UInt8]) {
        swap(&csvBytes, &csvLine)
        swap(&jsonBytes, &jsonLine)
    }

    /// Appends what `TableLayout.cell(field, of: r)` shows, reading the record's values in place.
    private func append(
        _ field: TableLayout.RecordField, of r: UnsafePointer<DeidentifiedRecord>, column: Int, csv csvBytes: inout [UInt8], json jsonBytes: inout [UInt8]
    ) {
        switch field {
        case .pseudonym: append(string: r.pointee.pseudonym, column: column, csv: &csvBytes, json: &jsonBytes)
        case .kind: append(string: r.pointee.kind.rawValue, column: column, csv: &csvBytes, json: &jsonBytes)
        case .start: append(r.pointee.start.map { .timestamp($0) } ?? .null, column: column, csv: &csvBytes, json: &jsonBytes)
        case .end: append(r.pointee.end.map { .timestamp($0) } ?? .null, column: column, csv: &csvBytes, json: &jsonBytes)
        case .value(let integerColumn):
            append(Cell.numeric(r.pointee.value, integral: integerColumn || r.pointee.kind.isInteger), column: column, csv: &csvBytes, json: &jsonBytes)
        case .valueLabel: append(text: r.pointee.valueLabel, column: column, csv: &csvBytes, json: &jsonBytes)
        case .unit: append(text: r.pointee.unit, column: column, csv: &csvBytes, json: &jsonBytes)
        case .text: append(text: r.pointee.text, column: column, csv: &csvBytes, json: &jsonBytes)
        case .source: append(text: r.pointee.source, column: column, csv: &csvBytes, json: &jsonBytes)
        case .note: append(text: r.pointee.note, column: column, csv: &csvBytes, json: &jsonBytes)
        case .none: append(Cell.null, column: column, csv: &csvBytes, json: &jsonBytes)
        }
    }

    /// Appends `text` as `append(text.map(Cell.string) ?? .null, …)` would, without the cell.
    private func append(text: String?, column: Int, csv csvBytes: inout [UInt8], json jsonBytes: inout [UInt8]) {
        guard let text else { return append(Cell.null, column: column, csv: &csvBytes, json: &jsonBytes) }
        append(string: text, column: column, csv: &csvBytes, json: &jsonBytes)
    }

    /// ``append(text:column:csv:json:)`` for a text that is there: a `String` passed where a
    /// `String?` is taken is copied into the optional (a retain and a release per row).
    private func append(string text: String, column: Int, csv csvBytes: inout [UInt8], json jsonBytes: inout [UInt8]) {
        if writesCSV {
            if column > 0 { csvBytes.append(UInt8(ascii: ",")) }
            Cell.appendCSV(string: text, to: &csvBytes)
        }
        if writesJSON {
            appendKey(column, to: &jsonBytes)
            Cell.appendJSON(string: text, to: &jsonBytes)
        }
    }

    /// Ends a row built at the end of the batch buffers (the writers move them into locals for
    /// the row, so appends need no exclusivity check on this object's properties), and hands a
    /// full batch over.
    private func endRow(csv csvBytes: inout [UInt8], json jsonBytes: inout [UInt8]) throws {
        rows += 1
        if writesCSV {
            csvBytes.append(0x0D)
            csvBytes.append(0x0A)
        }
        if writesJSON {
            jsonBytes.append(UInt8(ascii: "}"))
            jsonBytes.append(0x0A)
        }
        if csvBytes.count >= Self.batchBytes { try hand(&csvBytes, to: csv) }
        if jsonBytes.count >= Self.batchBytes { try hand(&jsonBytes, to: ndjson) }
    }

    /// Writes the batch `bytes` to `file` and empties it.
    private func hand(_ bytes: inout [UInt8], to file: BufferedFileWriter?) throws {
        guard let file, !bytes.isEmpty else { return }
        try file.write(bytes)
        bytes.removeAll(keepingCapacity: true)
    }

    /// Appends `cell` to both lines. A number, date or timestamp is formatted once: its JSON
    /// value is the CSV field's bytes, bare or in quotes (``Cell/jsonQuotesCSV``).
    private func append(_ cell: Cell, column: Int, csv csvBytes: inout [UInt8], json jsonBytes: inout [UInt8]) {
        if writesCSV {
            if column > 0 { csvBytes.append(UInt8(ascii: ",")) }
            let start = csvBytes.count
            cell.appendCSV(to: &csvBytes)
            if writesJSON, let quoted = cell.jsonQuotesCSV {
                appendKey(column, to: &jsonBytes)
                if quoted { jsonBytes.append(UInt8(ascii: "\"")) }
                csvBytes.withUnsafeBufferPointer { jsonBytes.append(contentsOf: UnsafeBufferPointer(rebasing: $0[start...])) }
                if quoted { jsonBytes.append(UInt8(ascii: "\"")) }
                return
            }
        }
        if writesJSON {
            appendKey(column, to: &jsonBytes)
            cell.appendJSON(to: &jsonBytes)
        }
    }

    /// Appends column `column`'s `"name":` (with the separator before it).
    private func appendKey(_ column: Int, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: jsonKeyBytes[jsonKeyRanges[column]]))
    }

    /// Hands the last batch over, closes the files and describes them.
    func finish() throws -> [ExportedFile] {
        try hand(&csvLine, to: csv)
        try hand(&jsonLine, to: ndjson)
        var files: [ExportedFile] = []
        for writer in [csv, ndjson].compactMap({ $0 }) {
            try writer.close()
            files.append(ExportedFile(path: writer.relativePath, rows: rows, bytes: writer.bytesWritten))
        }
        return files
    }
}
