/// Rows of a record file copied out of the reader's buffers, so they can be validated on
/// another thread while the reader goes on: each row's field bytes, its spans (as
/// ``RecordFields`` has them) and its line, and — for NDJSON rows, when asked — the line itself
/// (a rejects file echoes a rejected NDJSON row as the JSON reader renders it).
///
/// Holds no reference into the reader: built on the reader's thread, moved whole to a validator.
package struct RecordRowChunk {
    /// Every row's field bytes, one row after another.
    private var bytes: [UInt8] = []
    /// Per row, `spansPerRow` offsets into `bytes` (start, end per column; a start below 0: absent).
    private var spans: [Int] = []
    /// Per row, its line in the file.
    package private(set) var lines: [Int] = []
    /// With `keepingJSONLines`: the NDJSON lines, one after another, and each row's range in them.
    private var jsonBytes: [UInt8] = []
    private var jsonLines: [Range<Int>?] = []
    private let keepingJSONLines: Bool
    /// The reader's error after the last row of this chunk: the file stops there.
    package var failure: (any Error)?

    static let spansPerRow = 2 * RecordFields.Column.allCases.count

    /// An empty chunk; `keepingJSONLines`: keep NDJSON lines (only a rejects file needs them).
    package init(keepingJSONLines: Bool, capacity: Int) {
        self.keepingJSONLines = keepingJSONLines
        lines.reserveCapacity(capacity)
        spans.reserveCapacity(capacity * Self.spansPerRow)
        bytes.reserveCapacity(capacity * 64)
    }

    /// The number of rows.
    package var count: Int { lines.count }

    /// Copies the row `fields` read from `line`.
    package mutating func append(_ fields: RecordFields, line: Int) {
        for slot in 0..<Self.spansPerRow / 2 {
            let start = fields.spans[2 * slot]
            guard start >= 0 else {
                spans.append(-1)
                spans.append(-1)
                continue
            }
            let end = fields.spans[2 * slot + 1]
            spans.append(bytes.count)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: fields.bytes[start..<end]))
            spans.append(bytes.count)
        }
        lines.append(line)
        guard keepingJSONLines else { return }
        if let jsonLine = fields.jsonLine {
            let start = jsonBytes.count
            jsonBytes.append(contentsOf: jsonLine)
            jsonLines.append(start..<jsonBytes.count)
        } else {
            jsonLines.append(nil)
        }
    }

    /// Calls `body` with the fields and line of each row, in order.
    package func forEachRow(_ body: (RecordFields, Int) throws -> Void) rethrows {
        try bytes.withUnsafeBufferPointer { allBytes in
            try spans.withUnsafeBufferPointer { allSpans in
                try jsonBytes.withUnsafeBufferPointer { allJSON in
                    for row in lines.indices {
                        var fields = RecordFields(
                            bytes: allBytes, spans: UnsafeBufferPointer(rebasing: allSpans[(row * Self.spansPerRow)..<((row + 1) * Self.spansPerRow)]))
                        if keepingJSONLines, let range = jsonLines[row] { fields.jsonLine = UnsafeBufferPointer(rebasing: allJSON[range]) }
                        try body(fields, lines[row])
                    }
                }
            }
        }
    }
}
