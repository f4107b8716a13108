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

    /// The next row, or nil at the end of the file. Blank lines are skipped.
    public func next() throws -> CSVRow? {
        while true {
            guard try ensure(1) else { return nil }
            if !startedBOMCheck {
                startedBOMCheck = true
                if try ensure(3), buffer[position] == 0xEF, buffer[position + 1] == 0xBB, buffer[position + 2] == 0xBF { position += 3 }
                guard try ensure(1) else { return nil }
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
            return try readRow()
        }
    }

    private func readRow() throws -> CSVRow {
        let startLine = line
        var fields: [String] = []
        var field: [UInt8] = []
        var quoted = false
        var inQuotes = false
        var afterQuote = false
        while true {
            guard try ensure(1) else {
                if inQuotes {
                    throw CohortError.invalid("a quoted field is not closed before the end of the file", file: file, line: startLine,
                        hint: "close the quote, or double quotes inside a field (\"\")")
                }
                fields.append(String(decoding: field, as: UTF8.self))
                return CSVRow(line: startLine, fields: fields)
            }
            let byte = buffer[position]
            position += 1
            if inQuotes {
                if byte == 0x22 {
                    if try ensure(1), buffer[position] == 0x22 {
                        field.append(0x22)
                        position += 1
                    } else {
                        inQuotes = false
                        afterQuote = true
                    }
                } else {
                    if byte == 0x0A { line += 1 }
                    field.append(byte)
                }
                continue
            }
            switch byte {
            case 0x2C:
                fields.append(String(decoding: field, as: UTF8.self))
                field.removeAll(keepingCapacity: true)
                quoted = false
                afterQuote = false
            case 0x0A:
                line += 1
                fields.append(String(decoding: field, as: UTF8.self))
                return CSVRow(line: startLine, fields: fields)
            case 0x0D:
                if try ensure(1), buffer[position] == 0x0A { position += 1 }
                line += 1
                fields.append(String(decoding: field, as: UTF8.self))
                return CSVRow(line: startLine, fields: fields)
            case 0x22:
                guard field.isEmpty, !quoted else {
                    throw CohortError.invalid("a quote appears inside an unquoted field", file: file, line: line,
                        hint: "quote the whole field and double the inner quote (\"\")")
                }
                quoted = true
                inQuotes = true
            default:
                if afterQuote {
                    throw CohortError.invalid("text follows a closing quote", file: file, line: line,
                        hint: "a quoted field must end at a comma or line end")
                }
                field.append(byte)
            }
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
