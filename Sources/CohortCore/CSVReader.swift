public import Foundation

/// A row of a CSV file: its fields and the line it starts on (1-based, header = line 1).
public struct CSVRow: Sendable {
    public var line: Int
    public var fields: [String]
}

/// A streaming, byte-level RFC 4180 reader. Reads the file in chunks (memory stays flat),
/// accepts CRLF or LF line ends, quoted fields with doubled quotes and embedded line breaks, and
/// skips a UTF-8 BOM. Malformed quoting is an error naming the line.
public final class CSVReader {
    private let handle: FileHandle
    private let file: String
    private var buffer: [UInt8] = []
    private var position = 0
    private var eof = false
    private var line = 1
    private var startedBOMCheck = false
    private let chunkSize: Int

    public init(url: URL, chunkSize: Int = 1 << 18) throws {
        guard let handle = FileHandle(forReadingAtPath: url.path) else {
            throw CohortError(.notFound, "cannot open the file", at: .init(file: url.path), hint: "check the path and permissions")
        }
        self.handle = handle
        self.file = url.path
        self.chunkSize = chunkSize
    }

    deinit { try? handle.close() }

    /// The unescaped bytes of the current row's fields, one after another.
    private var rowBytes: [UInt8] = []
    /// Where each field of the current row ends in `rowBytes`.
    private var fieldEnds: [Int] = []
    /// The line the current row starts on (1-based; 0 before the first row).
    public private(set) var rowLine = 0

    /// The next row, or nil at the end of the file. Blank lines are skipped.
    public func next() throws -> CSVRow? {
        guard try advance() else { return nil }
        var fields: [String] = []
        fields.reserveCapacity(fieldEnds.count)
        var start = 0
        for end in fieldEnds {
            fields.append(String(decoding: rowBytes[start..<end], as: UTF8.self))
            start = end
        }
        return CSVRow(line: rowLine, fields: fields)
    }

    /// Reads the next row without making strings: its fields are then available through
    /// `withCurrentRow`, its line as `rowLine`. False at the end of the file. Blank lines are skipped.
    public func advance() throws -> Bool {
        while true {
            guard try ensure(1) else { return false }
            if !startedBOMCheck {
                startedBOMCheck = true
                if try ensure(3), buffer[position] == 0xEF, buffer[position + 1] == 0xBB, buffer[position + 2] == 0xBF { position += 3 }
                guard try ensure(1) else { return false }
            }
            // Skip blank lines.
            if buffer[position] == 0x0A {
                position += 1
                line += 1
                continue
            }
            if buffer[position] == 0x0D, try ensure(2), buffer[position + 1] == 0x0A {
                position += 2
                line += 1
                continue
            }
            try readRow()
            return true
        }
    }

    /// The number of fields of the current row.
    public var fieldCount: Int { fieldEnds.count }

    /// Calls `body` with the current row's unescaped field bytes, one field after another, and
    /// where each field ends in them (field `i` spans `ends[i - 1]..<ends[i]`, the first starts
    /// at 0). The bytes are valid only inside `body`.
    public func withCurrentRow<R>(_ body: (_ bytes: UnsafeBufferPointer<UInt8>, _ ends: [Int]) throws -> R) rethrows -> R {
        try rowBytes.withUnsafeBufferPointer { try body($0, fieldEnds) }
    }

    private func readRow() throws {
        let startLine = line
        rowBytes.removeAll(keepingCapacity: true)
        fieldEnds.removeAll(keepingCapacity: true)
        var fieldStart = 0
        var quoted = false
        var inQuotes = false
        var afterQuote = false
        while true {
            if position == buffer.count {
                guard try ensure(1) else {
                    if inQuotes {
                        throw CohortError.invalid("a quoted field is not closed before the end of the file", file: file, line: startLine,
                            hint: "close the quote, or double quotes inside a field (\"\")")
                    }
                    fieldEnds.append(rowBytes.count)
                    rowLine = startLine
                    return
                }
            }
            // Copy a run of ordinary bytes in one go: up to the next quote inside quotes, else up
            // to the next comma, line end or quote.
            let runEnd = scanRun(inQuotes: inQuotes)
            if runEnd > position {
                if inQuotes {
                    line += countLineFeeds(position..<runEnd)
                } else if afterQuote {
                    throw CohortError.invalid("text follows a closing quote", file: file, line: line,
                        hint: "a quoted field must end at a comma or line end")
                }
                rowBytes.append(contentsOf: buffer[position..<runEnd])
                position = runEnd
                continue
            }
            let byte = buffer[position]
            position += 1
            if inQuotes {
                // `byte` is a quote: doubled, it stands for one quote; alone, it closes the field.
                if try ensure(1), buffer[position] == 0x22 {
                    rowBytes.append(0x22)
                    position += 1
                } else {
                    inQuotes = false
                    afterQuote = true
                }
                continue
            }
            switch byte {
            case 0x2C:
                fieldEnds.append(rowBytes.count)
                fieldStart = rowBytes.count
                quoted = false
                afterQuote = false
            case 0x0A:
                line += 1
                fieldEnds.append(rowBytes.count)
                rowLine = startLine
                return
            case 0x0D:
                if try ensure(1), buffer[position] == 0x0A { position += 1 }
                line += 1
                fieldEnds.append(rowBytes.count)
                rowLine = startLine
                return
            default:  // a quote
                guard rowBytes.count == fieldStart, !quoted else {
                    throw CohortError.invalid("a quote appears inside an unquoted field", file: file, line: line,
                        hint: "quote the whole field and double the inner quote (\"\")")
                }
                quoted = true
                inQuotes = true
            }
        }
    }

    /// The end of the run of ordinary bytes starting at `position` in the buffer.
    private func scanRun(inQuotes: Bool) -> Int {
        buffer.withUnsafeBufferPointer { b in
            var i = position
            let n = b.count
            if inQuotes {
                while i < n, b[i] != 0x22 { i += 1 }
            } else {
                while i < n {
                    let c = b[i]
                    if c == 0x2C || c == 0x0A || c == 0x0D || c == 0x22 { break }
                    i += 1
                }
            }
            return i
        }
    }

    private func countLineFeeds(_ range: Range<Int>) -> Int {
        buffer.withUnsafeBufferPointer { b in
            var count = 0
            for i in range where b[i] == 0x0A { count += 1 }
            return count
        }
    }

    /// Makes at least `count` unread bytes available; false when the file ends first.
    private func ensure(_ count: Int) throws -> Bool {
        if buffer.count - position >= count { return true }
        if eof { return false }
        if position > 0 {
            buffer.removeFirst(position)
            position = 0
        }
        while buffer.count < count, !eof {
            let data = try handle.read(upToCount: chunkSize) ?? Data()
            if data.isEmpty { eof = true } else { buffer.append(contentsOf: data) }
        }
        return buffer.count - position >= count
    }
}
