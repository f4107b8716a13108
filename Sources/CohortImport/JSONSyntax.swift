/// Finds where a JSON text first breaks the grammar (RFC 8259), so an import error can name the
/// line and column — `JSONSerialization` says only "around character N" and may quote the
/// offending character, which can be part of a record value.
///
/// Iterative (an explicit stack, at most ``maxDepth`` levels deep, as `JSONSerialization`), so
/// deeply nested input cannot exhaust the call stack; one pass, no allocation per value.
package enum JSONSyntax {
    /// Nesting deeper than this is refused (the limit `JSONSerialization` applies too).
    package static let maxDepth = 512

    /// Where the text first goes wrong and what was expected there (fixed text, never input).
    package struct Problem: Error, Equatable {
        /// Byte offset of the problem.
        var offset: Int
        /// What was expected, e.g. "expected ',' or '}'".
        var expected: String
    }

    private enum Expect { case value, valueOrEnd, keyOrEnd, key, colon, commaOrEnd }

    /// The first problem in `b`, nil when `b` is one well-formed JSON value (with surrounding
    /// white space and an optional UTF-8 byte order mark).
    package static func firstProblem(_ b: UnsafeBufferPointer<UInt8>) -> Problem? {
        let n = b.count
        var i = 0
        if n >= 3, b[0] == 0xEF, b[1] == 0xBB, b[2] == 0xBF { i = 3 }
        var stack: [UInt8] = []
        var expect = Expect.value
        func problem(_ at: Int, _ text: String) -> Problem { Problem(offset: at, expected: text) }
        while true {
            while i < n, b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x0A || b[i] == 0x0D { i += 1 }
            if i == n {
                if stack.isEmpty, expect == .commaOrEnd { return nil }
                return problem(n, "the text ends early (an unclosed array, object or value)")
            }
            let c = b[i]
            switch expect {
            case .value, .valueOrEnd:
                if expect == .valueOrEnd, c == 0x5D {
                    stack.removeLast()
                    i += 1
                    expect = .commaOrEnd
                    continue
                }
                switch c {
                case 0x7B, 0x5B:
                    guard stack.count < maxDepth else { return problem(i, "nesting no deeper than \(maxDepth) levels") }
                    stack.append(c)
                    i += 1
                    expect = c == 0x7B ? .keyOrEnd : .valueOrEnd
                case 0x22:
                    switch string(b, at: i) {
                    case .success(let end): i = end
                    case .failure(let bad): return bad
                    }
                    expect = .commaOrEnd
                case 0x2D, 0x30...0x39:
                    guard let end = number(b, at: i) else { return problem(i, "a number such as 12, -3.5 or 1e3") }
                    i = end
                    expect = .commaOrEnd
                case 0x74, 0x66, 0x6E:
                    let word: [UInt8] = c == 0x74 ? Array("true".utf8) : c == 0x66 ? Array("false".utf8) : Array("null".utf8)
                    guard i + word.count <= n, b[i..<(i + word.count)].elementsEqual(word) else {
                        return problem(i, "a value (true, false or null are spelled in lower case)")
                    }
                    i += word.count
                    expect = .commaOrEnd
                default:
                    return problem(i, "a value (a string in double quotes, a number, an object, an array, true, false or null)")
                }
            case .keyOrEnd, .key:
                if expect == .keyOrEnd, c == 0x7D {
                    stack.removeLast()
                    i += 1
                    expect = .commaOrEnd
                    continue
                }
                guard c == 0x22 else { return problem(i, "a key in double quotes") }
                switch string(b, at: i) {
                case .success(let end): i = end
                case .failure(let bad): return bad
                }
                expect = .colon
            case .colon:
                guard c == 0x3A else { return problem(i, "':' after the key") }
                i += 1
                expect = .value
            case .commaOrEnd:
                guard let top = stack.last else { return problem(i, "nothing after the end of the JSON value") }
                let close: UInt8 = top == 0x7B ? 0x7D : 0x5D
                if c == 0x2C {
                    i += 1
                    expect = top == 0x7B ? .key : .value
                } else if c == close {
                    stack.removeLast()
                    i += 1
                } else {
                    return problem(i, top == 0x7B ? "',' or '}'" : "',' or ']'")
                }
            }
        }
    }

    /// Line and column (both from 1; the column counts characters, not bytes) of `offset`.
    package static func position(of offset: Int, in b: UnsafeBufferPointer<UInt8>) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for k in 0..<min(offset, b.count) {
            if b[k] == 0x0A {
                line += 1
                column = 1
            } else if b[k] & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }

    /// The end of the string whose opening quote is at `start`, or the problem inside it.
    private static func string(_ b: UnsafeBufferPointer<UInt8>, at start: Int) -> Result<Int, Problem> {
        let n = b.count
        var j = start + 1
        while j < n {
            let c = b[j]
            switch c {
            case 0x22:
                return .success(j + 1)
            case 0x5C:
                guard j + 1 < n else { return .failure(Problem(offset: start, expected: "a closing '\"' for the string that starts here")) }
                let e = b[j + 1]
                if e == 0x75 {
                    guard j + 6 <= n, b[(j + 2)..<(j + 6)].allSatisfy(isHex) else {
                        return .failure(Problem(offset: j, expected: "four hex digits after \\u"))
                    }
                    j += 6
                } else if [0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74].contains(e) {
                    j += 2
                } else {
                    return .failure(Problem(offset: j, expected: "an escape such as \\\" \\\\ \\n or \\u00e9"))
                }
            case 0..<0x20:
                return .failure(Problem(offset: j, expected: "no control character (line break, tab) inside a string; escape it"))
            case 0x80...:
                guard let length = utf8Length(b, at: j) else { return .failure(Problem(offset: j, expected: "text in UTF-8")) }
                j += length
            default:
                j += 1
            }
        }
        return .failure(Problem(offset: start, expected: "a closing '\"' for the string that starts here"))
    }

    private static func isHex(_ c: UInt8) -> Bool { (0x30...0x39).contains(c) || (0x41...0x46).contains(c) || (0x61...0x66).contains(c) }

    /// The length of the well-formed UTF-8 sequence at `i`, nil when it is not one.
    private static func utf8Length(_ b: UnsafeBufferPointer<UInt8>, at i: Int) -> Int? {
        let lead = b[i]
        let length: Int
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return nil
        }
        guard i + length <= b.count else { return nil }
        for k in 1..<length where b[i + k] & 0xC0 != 0x80 { return nil }
        // Overlong three- and four-byte forms, UTF-16 surrogates, beyond U+10FFFF.
        let second = b[i + 1]
        if lead == 0xE0, second < 0xA0 { return nil }
        if lead == 0xED, second >= 0xA0 { return nil }
        if lead == 0xF0, second < 0x90 { return nil }
        if lead == 0xF4, second >= 0x90 { return nil }
        return length
    }

    /// The end of the number at `start`: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
    private static func number(_ b: UnsafeBufferPointer<UInt8>, at start: Int) -> Int? {
        let n = b.count
        var i = start
        func digits() -> Bool {
            let from = i
            while i < n, (0x30...0x39).contains(b[i]) { i += 1 }
            return i > from
        }
        if b[i] == 0x2D { i += 1 }
        guard i < n else { return nil }
        if b[i] == 0x30 {
            i += 1
        } else {
            guard digits() else { return nil }
        }
        if i < n, b[i] == 0x2E {
            i += 1
            guard digits() else { return nil }
        }
        if i < n, b[i] == 0x65 || b[i] == 0x45 {
            i += 1
            if i < n, b[i] == 0x2B || b[i] == 0x2D { i += 1 }
            guard digits() else { return nil }
        }
        return i
    }
}
