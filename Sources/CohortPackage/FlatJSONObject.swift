import Foundation

/// A strict reader of one NDJSON line that holds a flat JSON object — string keys, values that
/// are strings, numbers, `true`, `false` or `null` — as every table row cohort publishes is: the
/// consent check's reader of `data/json/` (issue 28, sixteenth round: `JSONSerialization` per
/// line would have made `cohort verify` about twice as slow at bench M).
///
/// It holds by construction against a parser differential (a line it reads one way and a
/// recipient's JSON parser another): it accepts only RFC 8259 JSON and, beyond that, refuses
/// what parsers disagree on or a table row never holds — a key twice (parsers keep the first,
/// the last, or refuse), a nested object or array, bytes that are not UTF-8, an escape that
/// decodes to half a surrogate pair. What it accepts, `JSONSerialization` reads as the same
/// object with the same strings (`FlatJSONObjectTests` holds it to that on generated lines).
package enum FlatJSONObject {
    /// A value of a key the caller asked for.
    package enum Value: Equatable {
        case string(String)
        case null
        /// A number, `true` or `false` (its text is not needed by the consent check).
        case other
    }

    /// Why a line is not read (no byte of it is quoted).
    package struct Refusal: Error, Equatable {
        package let reason: String
    }

    /// Reads lines for a fixed list of keys, reusing its buffers from line to line (a table's
    /// rows: hundreds of thousands of lines, no allocation per line but the strings kept).
    package final class Parser {
        /// The keys asked for, and after each ``read(_:)`` their values in that order (nil: the
        /// key is not in the line).
        package let keys: [String]
        package private(set) var values: [Value?]
        private let keyBytes: [[UInt8]]
        /// The current line's keys so far: where each is (unescaped keys only).
        private var seen: [(start: Int, count: Int)] = []

        package init(keys: [String]) {
            self.keys = keys
            keyBytes = keys.map { Array($0.utf8) }
            values = Array(repeating: nil, count: keys.count)
        }

        /// Reads `line` into ``values``.
        ///
        /// - Throws: ``Refusal`` when the line is not exactly one flat JSON object (whitespace
        ///   around tokens allowed).
        package func read(_ line: UnsafeBufferPointer<UInt8>) throws(Refusal) {
            for index in values.indices { values[index] = nil }
            seen.removeAll(keepingCapacity: true)
            var reader = Reader(bytes: line)
            do throws(Refusal) {
                try reader.object(self, decodingKeys: false)
            } catch {
                guard reader.foundEscapedKey else { throw error }
                // A key written with an escape: read the line again comparing decoded keys.
                for index in values.indices { values[index] = nil }
                var again = Reader(bytes: line)
                try again.object(self, decodingKeys: true)
            }
        }

        /// Records the key at `raw` (unescaped): its index among ``keys``, or nil.
        fileprivate func rawKey(_ raw: UnsafeBufferPointer<UInt8>, at start: Int) throws(Refusal) -> Int? {
            guard let base = raw.baseAddress else { throw Refusal(reason: "a key in quotes") }
            for previous in seen where previous.count == raw.count {
                if memcmp(base - start + previous.start, base, raw.count) == 0 { throw Refusal(reason: "each key once (a key appears twice)") }
            }
            seen.append((start, raw.count))
            return keyBytes.firstIndex { $0.count == raw.count && memcmp($0, base, raw.count) == 0 }
        }

        /// The decoded keys of a line read again (``read(_:)``), compared by their bytes.
        fileprivate var decoded: [[UInt8]] = []

        fileprivate func decodedKey(_ key: String) throws(Refusal) -> Int? {
            let bytes = Array(key.utf8)
            guard !decoded.contains(bytes) else { throw Refusal(reason: "each key once (a key appears twice)") }
            decoded.append(bytes)
            return keyBytes.firstIndex(of: bytes)
        }

        fileprivate func set(_ value: Value, at index: Int) { values[index] = value }
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var i = 0
        /// Whether a key with an escape was met (the fast reading compares raw keys only).
        var foundEscapedKey = false
        /// Whether the string ``string(decoded:)`` read last had an escape.
        var lastStringEscaped = false

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        /// Reads the object into `parser`: raw keys compared byte for byte, or, `decodingKeys`,
        /// every key decoded first (a line where some key has an escape).
        mutating func object(_ parser: Parser, decodingKeys: Bool) throws(Refusal) {
            if decodingKeys { parser.decoded.removeAll(keepingCapacity: true) }
            skipSpace()
            try expect(0x7B, "a JSON object starting with {")
            skipSpace()
            if peek() == 0x7D {
                i += 1
            } else {
                while true {
                    skipSpace()
                    guard peek() == 0x22 else { throw Refusal(reason: "a key in quotes") }
                    let index: Int?
                    if decodingKeys {
                        guard let key = try string(decoded: true) else { throw Refusal(reason: "a key in quotes") }
                        index = try parser.decodedKey(key)
                    } else {
                        let start = i + 1
                        let escaped = try skipString()
                        if escaped {
                            foundEscapedKey = true
                            throw Refusal(reason: "a key without escapes (read again)")
                        }
                        index = try parser.rawKey(UnsafeBufferPointer(rebasing: bytes[start..<(i - 1)]), at: start)
                    }
                    skipSpace()
                    try expect(0x3A, "a colon after a key")
                    skipSpace()
                    let value = try value(decoded: index != nil)
                    if let index { parser.set(value, at: index) }
                    skipSpace()
                    if peek() == 0x2C {
                        i += 1
                        continue
                    }
                    try expect(0x7D, "a comma or the closing }")
                    break
                }
            }
            skipSpace()
            guard i == bytes.count else { throw Refusal(reason: "nothing after the object's closing }") }
        }

        /// Checks the string at `i` (its opening quote) as ``string(decoded:)`` does without
        /// keeping it; returns whether it has an escape. `i` ends past its closing quote.
        mutating func skipString() throws(Refusal) -> Bool {
            _ = try string(decoded: false)
            return lastStringEscaped
        }

        /// A value; a string's text only when `decoded` (it is checked either way).
        mutating func value(decoded: Bool) throws(Refusal) -> Value {
            switch peek() {
            case 0x22: return try string(decoded: decoded).map(Value.string) ?? .other  // not kept: checked only
            case 0x7B, 0x5B: throw Refusal(reason: "a flat object (a value is an object or an array)")
            case 0x74: try literal("true")
            case 0x66: try literal("false")
            case 0x6E:
                try literal("null")
                return .null
            default: try number()
            }
            return .other
        }

        mutating func literal(_ word: StaticString) throws(Refusal) {
            let n = word.utf8CodeUnitCount
            guard i + n <= bytes.count, memcmp(bytes.baseAddress! + i, word.utf8Start, n) == 0 else {
                throw Refusal(reason: "a string, number, true, false or null as a value")
            }
            i += n
        }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
        mutating func number() throws(Refusal) {
            let refusal = Refusal(reason: "a string, number, true, false or null as a value")
            if peek() == 0x2D { i += 1 }
            guard let first = peek(), isDigit(first) else { throw refusal }
            i += 1
            if first != 0x30 { while let b = peek(), isDigit(b) { i += 1 } }
            if peek() == 0x2E {
                i += 1
                guard let b = peek(), isDigit(b) else { throw refusal }
                while let b = peek(), isDigit(b) { i += 1 }
            }
            if peek() == 0x65 || peek() == 0x45 {
                i += 1
                if peek() == 0x2B || peek() == 0x2D { i += 1 }
                guard let b = peek(), isDigit(b) else { throw refusal }
                while let b = peek(), isDigit(b) { i += 1 }
            }
        }

        /// A string at `i` (its opening quote), checked, and decoded when `decoded` (else nil);
        /// `i` ends past its closing quote.
        mutating func string(decoded: Bool) throws(Refusal) -> String? {
            i += 1
            let start = i
            var escaped = false
            while true {
                guard let b = peek() else { throw Refusal(reason: "a closing quote") }
                if b == 0x22 { break }
                if b < 0x20 { throw Refusal(reason: "no control character inside a string (escape it)") }
                if b == 0x5C {
                    escaped = true
                    i += 1
                    guard let e = peek() else { throw Refusal(reason: "a closing quote") }
                    if e == 0x75 {
                        guard i + 4 < bytes.count, (1...4).allSatisfy({ isHex(bytes[i + $0]) }) else {
                            throw Refusal(reason: "four hex digits after \\u")
                        }
                        i += 4
                    } else if !"\"\\/bfnrt".utf8.contains(e) {
                        throw Refusal(reason: "a valid escape after a backslash")
                    }
                }
                i += 1
            }
            let raw = UnsafeBufferPointer(rebasing: bytes[start..<i])
            i += 1
            lastStringEscaped = escaped
            // ASCII is UTF-8 (escapes are ASCII and checked above); anything else is validated.
            if !escaped, raw.allSatisfy({ $0 < 0x80 }) { return decoded ? String(decoding: raw, as: UTF8.self) : nil }
            guard let text = String(validating: raw, as: UTF8.self) else { throw Refusal(reason: "UTF-8 text") }
            guard decoded else {
                if escaped { _ = try Self.unescape(text) }  // a half surrogate pair is refused either way
                return nil
            }
            return escaped ? try Self.unescape(text) : text
        }

        /// The string whose JSON escapes are in `text` (already checked to be well formed).
        static func unescape(_ text: String) throws(Refusal) -> String {
            var out = String.UnicodeScalarView()
            var scalars = text.unicodeScalars.makeIterator()
            func hex4() -> UInt32 {
                var value: UInt32 = 0
                for _ in 0..<4 { value = value << 4 | (scalars.next().flatMap { UInt32(String($0), radix: 16) } ?? 0) }
                return value
            }
            while let s = scalars.next() {
                guard s == "\\", let e = scalars.next() else {
                    out.append(s)
                    continue
                }
                switch e {
                case "b": out.append("\u{08}")
                case "f": out.append("\u{0C}")
                case "n": out.append("\n")
                case "r": out.append("\r")
                case "t": out.append("\t")
                case "u":
                    let unit = hex4()
                    if (0xD800..<0xDC00).contains(unit) {
                        // A high surrogate needs `\uDC00`–`\uDFFF` right after it.
                        guard scalars.next() == "\\", scalars.next() == "u" else { throw Refusal(reason: "no lone surrogate in a \\u escape") }
                        let low = hex4()
                        guard (0xDC00..<0xE000).contains(low), let scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)) else {
                            throw Refusal(reason: "no lone surrogate in a \\u escape")
                        }
                        out.append(scalar)
                    } else if let scalar = Unicode.Scalar(unit) {
                        out.append(scalar)
                    } else {
                        throw Refusal(reason: "no lone surrogate in a \\u escape")
                    }
                default: out.append(e)  // " \ /
                }
            }
            return String(out)
        }

        mutating func expect(_ byte: UInt8, _ what: String) throws(Refusal) {
            guard peek() == byte else { throw Refusal(reason: what) }
            i += 1
        }

        func peek() -> UInt8? { i < bytes.count ? bytes[i] : nil }

        mutating func skipSpace() {
            while let b = peek(), b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D { i += 1 }
        }

        func isDigit(_ b: UInt8) -> Bool { b &- 0x30 < 10 }

        func isHex(_ b: UInt8) -> Bool { b &- 0x30 < 10 || (b | 0x20) &- 0x61 < 6 }
    }
}
