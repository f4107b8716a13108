import Foundation

/// The columns of a cohort record file (CSV header, NDJSON keys): `participant`, `kind` and
/// `start` are required, the others optional.
package enum RecordColumns {
    /// The column names, in order.
    public static let names = ["participant", "kind", "start", "end", "value", "unit", "text", "source", "note"]
    /// The columns a rejects file (`--rejects`) puts before them: a fixed rejects file imports as
    /// it is, these ignored.
    package static let rejectsAnnotations = ["line", "field", "reason"]
}

/// One input row's record columns as UTF-8 byte slices, without a string or dictionary per row.
/// A view into the reader's buffers: valid only while the row's callback runs.
package struct RecordFields {
    /// The record columns, in ``RecordColumns/names`` order.
    package enum Column: Int, CaseIterable {
        case participant, kind, start, end, value, unit, text, source, note

        var name: String { RecordColumns.names[rawValue] }

        /// The column named `name` (already lower-cased), if any.
        init?(name: String) {
            guard let index = RecordColumns.names.firstIndex(of: name) else { return nil }
            self.init(rawValue: index)
        }
    }

    /// The bytes the spans point into.
    package let bytes: UnsafeBufferPointer<UInt8>
    /// Per column, its start and end in `bytes` (`2 * column`, `2 * column + 1`); a start below 0
    /// marks an absent (or empty) value.
    package let spans: UnsafeBufferPointer<Int>
    /// For NDJSON rows: the line itself, so a rejected row can be echoed exactly as the JSON
    /// reader renders it.
    package var jsonLine: UnsafeBufferPointer<UInt8>?

    /// The value of `column`, nil when absent or empty.
    subscript(_ column: Column) -> UnsafeBufferPointer<UInt8>? {
        let start = spans[2 * column.rawValue]
        guard start >= 0 else { return nil }
        return UnsafeBufferPointer(rebasing: bytes[start..<spans[2 * column.rawValue + 1]])
    }

    /// The value of `column` as text, nil when absent or empty.
    package func string(_ column: Column) -> String? {
        self[column].map { String(decoding: $0, as: UTF8.self) }
    }

    /// Column name → text, as the rejects file echoes the row.
    package func dictionary(file: String, line: Int) -> [String: String] {
        if let jsonLine, let object = try? JSONSerialization.jsonObject(with: Data(jsonLine.filter { $0 != 0x0D })),
            let fields = try? RowSource.fields(of: object, file: file, line: line)
        {
            return fields
        }
        var result: [String: String] = [:]
        for column in Column.allCases {
            if let value = string(column) { result[column.name] = value }
        }
        return result
    }

    /// Calls `body` with the fields of `dictionary` (column name → non-empty text).
    package static func with<R>(_ dictionary: [String: String], _ body: (RecordFields) throws -> R) rethrows -> R {
        var bytes: [UInt8] = []
        var spans = [Int](repeating: -1, count: 2 * Column.allCases.count)
        for column in Column.allCases {
            guard let value = dictionary[column.name], !value.isEmpty else { continue }
            spans[2 * column.rawValue] = bytes.count
            bytes.append(contentsOf: value.utf8)
            spans[2 * column.rawValue + 1] = bytes.count
        }
        return try bytes.withUnsafeBufferPointer { b in
            try spans.withUnsafeBufferPointer { s in try body(RecordFields(bytes: b, spans: s)) }
        }
    }
}
