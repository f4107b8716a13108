public import Foundation
import CohortCore

/// A row of a CSV file: its fields and the line it starts on (1-based, header = line 1).
public struct CSVRow: Sendable {
    public var line: Int
    public var fields: [String]
}

/// A streaming, byte-level RFC 4180 reader. Reads the file in chunks (memory stays flat),
/// accepts CRLF or LF line ends, quoted fields with doubled quotes and embedded line breaks, and
/// skips a UTF-8 BOM. Malformed quoting is an error naming the line.
///
/// Caps: a field holds at most ``maxFieldBytes`` (64 KiB) and a row at most ``maxRowBytes``
/// (1 MiB) after unescaping; a longer one is refused as soon as the cap is passed (so a 10 MB
/// field, or an unclosed quote that would swallow the rest of the file, costs one pass over the
/// cap, not the file). Errors name the line and the field's position, never its bytes.
public final class CSVReader {
    /// The largest field, in bytes, a row may hold.
    public static let maxFieldBytes = 64 << 10
    /// The largest row, in bytes (its fields together), a file may hold.
    public static let maxRowBytes = 1 << 20

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
    package func withCurrentRow<R>(_ body: (_ bytes: UnsafeBufferPointer<UInt8>, _ ends: [Int]) throws -> R) rethrows -> R {
        try rowBytes.withUnsafeBufferPointer { try body($0, fieldEnds) }
    }

    /// How a pass over the buffered bytes ended.
    private enum Scan {
        case row
        case endOfFile
        /// Needs this many unread bytes (a quote or CR at the end of the buffer needs the next byte).
        case more(Int)
        case quoteInsideField
        case textAfterQuote
        case fieldTooLong
        case rowTooLong
    }

    /// The state of a row being read, kept across buffer refills.
    private struct RowState {
        var fieldStart = 0
        var quoted = false
        var inQuotes = false
        var afterQuote = false
    }

    private func readRow() throws {
        let startLine = line
        // Work on local copies (no per-byte access to the object's properties), put back at the end.
        var out: [UInt8] = []
        var ends: [Int] = []
        swap(&out, &rowBytes)
        swap(&ends, &fieldEnds)
        defer {
            swap(&out, &rowBytes)
            swap(&ends, &fieldEnds)
        }
        out.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        var state = RowState()
        while true {
            var i = position
            var currentLine = line
            let final = eof
            let scan = buffer.withUnsafeBufferPointer { b in
                Self.scan(b, from: &i, line: &currentLine, final: final, state: &state, out: &out, ends: &ends)
            }
            position = i
            line = currentLine
            switch scan {
            case .row:
                rowLine = startLine
                return
            case .endOfFile:
                if state.inQuotes {
                    throw CohortError.invalid("a quoted field is not closed before the end of the file", file: file, line: startLine,
                        hint: "close the quote, or double quotes inside a field (\"\")")
                }
                ends.append(out.count)
                rowLine = startLine
                return
            case let .more(count):
                _ = try ensure(count)
            case .quoteInsideField:
                throw CohortError.invalid("a quote appears inside an unquoted field", file: file, line: line,
                    hint: "quote the whole field and double the inner quote (\"\")")
            case .textAfterQuote:
                throw CohortError.invalid("text follows a closing quote", file: file, line: line,
                    hint: "a quoted field must end at a comma or line end")
            case .fieldTooLong:
                throw CohortError.invalid("field \(ends.count + 1) is longer than \(Self.maxFieldBytes / 1024) KiB", file: file, line: startLine,
                    hint: state.inQuotes ? "is a quote left open? Otherwise shorten the field" : "fields are limited to \(Self.maxFieldBytes / 1024) KiB")
            case .rowTooLong:
                throw CohortError.invalid("the row is longer than \(Self.maxRowBytes >> 20) MiB", file: file, line: startLine,
                    hint: "rows are limited to \(Self.maxRowBytes >> 20) MiB; is a quote left open?")
            }
        }
    }

    /// Reads row bytes from `b` starting at `i` until the row ends, the buffer runs out or an
    /// error is found. `final`: no bytes follow `b` in the file.
    private static func scan(
        _ b: UnsafeBufferPointer<UInt8>, from i: inout Int, line: inout Int, final: Bool, state: inout RowState, out: inout [UInt8],
        ends: inout [Int]
    ) -> Scan {
        let n = b.count
        while true {
            if i == n { return final ? .endOfFile : .more(1) }
            if state.inQuotes {
                // Up to the next quote, counting line breaks.
                var j = i
                while j < n, b[j] != 0x22 {
                    if b[j] == 0x0A { line += 1 }
                    j += 1
                }
                if j > i {
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: b[i..<j]))
                    i = j
                    if let over = overCap(out: out, state: state) { return over }
                    continue
                }
                // A quote: doubled, it stands for one quote; alone, it closes the field.
                if i + 1 == n, !final { return .more(2) }
                if i + 1 < n, b[i + 1] == 0x22 {
                    out.append(0x22)
                    i += 2
                    if let over = overCap(out: out, state: state) { return over }
                } else {
                    state.inQuotes = false
                    state.afterQuote = true
                    i += 1
                }
                continue
            }
            // Up to the next comma, line end or quote.
            var j = i
            while j < n {
                let c = b[j]
                if c == 0x2C || c == 0x0A || c == 0x0D || c == 0x22 { break }
                j += 1
            }
            if j > i {
                if state.afterQuote { return .textAfterQuote }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: b[i..<j]))
                i = j
                if let over = overCap(out: out, state: state) { return over }
                continue
            }
            switch b[i] {
            case 0x2C:
                ends.append(out.count)
                state.fieldStart = out.count
                state.quoted = false
                state.afterQuote = false
                i += 1
            case 0x0A:
                line += 1
                ends.append(out.count)
                i += 1
                return .row
            case 0x0D:
                if i + 1 == n, !final { return .more(2) }
                i += 1
                if i < n, b[i] == 0x0A { i += 1 }
                line += 1
                ends.append(out.count)
                return .row
            default:  // a quote
                guard out.count == state.fieldStart, !state.quoted else { return .quoteInsideField }
                state.quoted = true
                state.inQuotes = true
                i += 1
            }
        }
    }

    /// `.fieldTooLong` or `.rowTooLong` once the current field or row passed its cap.
    private static func overCap(out: [UInt8], state: RowState) -> Scan? {
        if out.count - state.fieldStart > maxFieldBytes { return .fieldTooLong }
        if out.count > maxRowBytes { return .rowTooLong }
        return nil
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
