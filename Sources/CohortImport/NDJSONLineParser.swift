import CohortCore
import CohortIO

/// A fast reader for the plain NDJSON record lines wearable exports are made of: one flat object
/// whose keys are record columns and whose values are ASCII strings without escapes, integers,
/// decimals (for `value`) or null. It accepts only lines whose meaning is certain; for anything
/// else (escapes, non-ASCII text, exponents, true/false, nesting, duplicate or unknown keys,
/// malformed JSON) it declines, and the caller reads the line with `JSONSerialization`, so the
/// result — and every error — is the same as before.
package struct NDJSONLineParser {
    /// The current line's values, one after another.
    private var values: [UInt8] = []
    /// Per column, start and end in `values` (see `RecordFields.spans`).
    private var spans = [Int](repeating: -1, count: 2 * RecordFields.Column.allCases.count)
    /// The column names' UTF-8, by column.
    private let names: [[UInt8]] = RecordFields.Column.allCases.map { Array($0.name.utf8) }

    /// Parses `line` and calls `body` with its fields; false (without calling `body`) when the
    /// line is not in the plain form this parser takes.
    package mutating func parse(_ line: UnsafeBufferPointer<UInt8>, _ body: (RecordFields) throws -> Void) rethrows -> Bool {
        guard scan(line) else { return false }
        try values.withUnsafeBufferPointer { bytes in
            try spans.withUnsafeBufferPointer { try body(RecordFields(bytes: bytes, spans: $0, jsonLine: line)) }
        }
        return true
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private mutating func scan(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        values.removeAll(keepingCapacity: true)
        for i in spans.indices { spans[i] = -1 }
        let n = b.count
        var i = 0
        func skipSpace() { while i < n, Self.isSpace(b[i]) { i += 1 } }
        /// The end of the plain string starting after the quote at `i - 1`, or nil.
        func plainString() -> Int? {
            var j = i
            while j < n {
                let c = b[j]
                // Longer than a field may be: the general path refuses it with its error.
                if c == 0x22 { return j - i <= CSVReader.maxFieldBytes ? j : nil }
                // Escapes, control characters and non-ASCII text: leave to JSONSerialization.
                if c == 0x5C || c < 0x20 || c >= 0x80 { return nil }
                j += 1
            }
            return nil
        }
        skipSpace()
        guard i < n, b[i] == 0x7B else { return false }
        i += 1
        skipSpace()
        var seen = 0
        if i < n, b[i] == 0x7D {
            i += 1
        } else {
            while true {
                guard i < n, b[i] == 0x22 else { return false }
                i += 1
                guard let keyEnd = plainString() else { return false }
                let key = UnsafeBufferPointer(rebasing: b[i..<keyEnd])
                guard let column = names.firstIndex(where: { $0.elementsEqual(key) }), seen & (1 << column) == 0 else { return false }
                seen |= 1 << column
                i = keyEnd + 1
                skipSpace()
                guard i < n, b[i] == 0x3A else { return false }
                i += 1
                skipSpace()
                guard i < n else { return false }
                let c = b[i]
                if c == 0x22 {
                    i += 1
                    guard let end = plainString() else { return false }
                    if end > i { record(column, b[i..<end]) }  // an empty string is an absent value
                    i = end + 1
                } else if c == 0x6E {
                    guard i + 4 <= n, b[i + 1] == 0x75, b[i + 2] == 0x6C, b[i + 3] == 0x6C else { return false }
                    i += 4
                } else if c == 0x2D || Self.isDigit(c) {
                    guard let end = number(b, from: i, column: column) else { return false }
                    record(column, b[i..<end])
                    i = end
                } else {
                    return false
                }
                skipSpace()
                guard i < n else { return false }
                if b[i] == 0x2C {
                    i += 1
                    skipSpace()
                    continue
                }
                guard b[i] == 0x7D else { return false }
                i += 1
                break
            }
        }
        skipSpace()
        return i == n
    }

    /// The end of the number token at `start`, when its text is exactly what JSONSerialization
    /// makes of it: integers of up to 18 digits (not `-0`) in any column, and for `value` also
    /// decimals of up to 17 digits without an exponent (the number read from the token and from
    /// JSONSerialization's text is the same `Double`). Nil otherwise.
    private func number(_ b: UnsafeBufferPointer<UInt8>, from start: Int, column: Int) -> Int? {
        let n = b.count
        var i = start
        if b[i] == 0x2D { i += 1 }
        guard i < n, Self.isDigit(b[i]) else { return nil }
        let integerStart = i
        if b[i] == 0x30 {
            i += 1
        } else {
            while i < n, Self.isDigit(b[i]) { i += 1 }
        }
        var digits = i - integerStart
        if i < n, b[i] == 0x2E {
            guard column == RecordFields.Column.value.rawValue else { return nil }
            i += 1
            let fractionStart = i
            while i < n, Self.isDigit(b[i]) { i += 1 }
            guard i > fractionStart else { return nil }
            digits += i - fractionStart
            guard digits <= 17 else { return nil }
        } else {
            guard digits <= 18 else { return nil }
            // "-0" reads as 0.
            if b[start] == 0x2D, b[integerStart] == 0x30 { return nil }
        }
        if i < n, b[i] == 0x65 || b[i] == 0x45 { return nil }
        return i
    }

    private mutating func record(_ column: Int, _ bytes: Slice<UnsafeBufferPointer<UInt8>>) {
        spans[2 * column] = values.count
        values.append(contentsOf: bytes)
        spans[2 * column + 1] = values.count
    }
}
