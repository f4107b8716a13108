import Foundation

/// Reusable buffers for matching one line at a time: the line's Unicode scalars (for lines
/// that are not plain ASCII, JSON-unescaped when asked), its words and their folded keys. Kept
/// across lines so scanning a file allocates only when a line is longer than any before it (or
/// has non-ASCII words, whose keys are folded by Foundation).
struct LineWorkspace: Sendable {
    var scalars: [UInt32] = []
    var unescaped: [UInt32] = []
    /// The words of the line: the first `tokenCount` elements.
    var tokens: [PackedToken] = []
    var tokenCount = 0
    var keyBytes: [UInt8] = []
    var nonASCIIKeys: [String] = []
    var groups: [(start: Int, end: Int)] = []
    /// The JSON-unescaped bytes of a plain ASCII line (see ``unescapeJSON(_:into:)``).
    var unescapedBytes: [UInt8] = []

    /// Buffers sized for lines of about `capacity` scalars (they grow for longer ones).
    init(capacity: Int = 4096) {
        scalars.reserveCapacity(capacity)
    }

    /// Fills `scalars` with the line `bytes`, decoded as UTF-8 the way `String(decoding:as:)`
    /// does (invalid sequences become U+FFFD).
    mutating func load(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        scalars.removeAll(keepingCapacity: true)
        var ascii = true
        for b in bytes where b >= 0x80 {
            ascii = false
            break
        }
        if ascii {
            for b in bytes { scalars.append(UInt32(b)) }
        } else {
            for s in String(decoding: bytes, as: UTF8.self).unicodeScalars { scalars.append(s.value) }
        }
    }

    /// Fills `scalars` with the scalars of `text`.
    mutating func load(_ text: String) {
        scalars.removeAll(keepingCapacity: true)
        for s in text.unicodeScalars { scalars.append(s.value) }
    }

    /// The key of token `t` as a string (allocates; for rare comparisons only).
    func keyString(_ t: PackedToken) -> String {
        if t.isASCII { return String(decoding: keyBytes[t.keyStart..<(t.keyStart + t.keyLength)], as: UTF8.self) }
        return nonASCIIKeys[t.keyStart]
    }

    /// The words of `scalars` (``TextTokenizer/tokenize(_:into:)``), with their keys as strings.
    mutating func tokenizeScalars() -> [TextToken] {
        let scalars = self.scalars
        scalars.withUnsafeBufferPointer { TextTokenizer.tokenize($0, into: &self) }
        return textTokens()
    }

    /// The words found by the last ``TextTokenizer/tokenize(_:into:)``, with their keys as strings.
    func textTokens() -> [TextToken] {
        (0..<tokenCount).map { t in
            let token = tokens[t]
            let key = keyString(token)
            let letters: Int
            if token.isASCII {
                letters = keyBytes[token.keyStart..<(token.keyStart + token.keyLength)].reduce(0) { $0 + ($1 >= 0x30 && $1 <= 0x39 ? 0 : 1) }
            } else {
                letters = TextTokenizer.letterCount(ofKey: key)
            }
            return TextToken(
                start: token.start, coreEnd: token.coreEnd, end: token.end, key: key, isCapitalized: token.isCapitalized, letterCount: letters)
        }
    }

    /// Replaces `scalars` by their JSON-unescaped form (``unescapeJSON(_:into:)``).
    mutating func unescapeJSON() {
        guard scalars.contains(0x5C) else { return }
        var out: [UInt32] = []
        swap(&out, &unescaped)
        let count = scalars.withUnsafeBufferPointer { Self.unescapeJSON($0, into: &out) }
        // Scalars always fit UInt32, so there is always a count.
        out.removeSubrange(min(count ?? out.count, out.count)...)
        swap(&out, &scalars)
        unescaped = out
    }

    /// Writes the JSON-unescaped form of the code units `src` (the content of a JSON string,
    /// bytes or scalars) to the start of `out` (grown when shorter than `src`) and returns its
    /// length: `\n`, `\r`, `\t`, `\b`, `\f` become a space (they separate words), `\u00e9` and
    /// surrogate pairs their scalar (a lone surrogate a space), any other escaped character
    /// itself; a malformed `\u` and a backslash ending the text stay as they are. Returns nil
    /// when a scalar does not fit `Out` (a non-ASCII escape into bytes): the text must then be
    /// unescaped as scalars. The one JSON unescaper of the scanner.
    static func unescapeJSON<In: FixedWidthInteger & UnsignedInteger, Out: FixedWidthInteger & UnsignedInteger>(
        _ src: UnsafeBufferPointer<In>, into out: inout [Out]
    ) -> Int? {
        let n = src.count
        if out.count < n { out = [Out](repeating: 0, count: max(n, out.count * 2)) }
        guard let base = src.baseAddress else { return 0 }
        // Bytes are UTF-8: only ASCII scalars are written as one byte.
        let limit: UInt32 = Out.bitWidth == 8 ? 0x7F : UInt32.max
        return out.withUnsafeMutableBufferPointer { buffer -> Int? in
            guard let dst = buffer.baseAddress else { return nil }
            var i = 0
            var o = 0
            while i < n {
                // Copy up to the next backslash in one go.
                let slash = nextBackslash(src, from: i)
                while i < slash {
                    dst[o] = Out(truncatingIfNeeded: base[i])
                    o += 1
                    i += 1
                }
                guard i < n else { break }
                guard let (scalar, length) = escape(src, at: i) else {
                    // A malformed `\u`, or a backslash ending the text, stays as it is.
                    dst[o] = 0x5C
                    o += 1
                    i += 1
                    continue
                }
                guard scalar <= limit else { return nil }
                dst[o] = Out(truncatingIfNeeded: scalar)
                o += 1
                i += length
            }
            return o
        }
    }

    /// The position of the first backslash in `src` from `i` (its count when there is none).
    @inline(__always)
    private static func nextBackslash<In: FixedWidthInteger & UnsignedInteger>(_ src: UnsafeBufferPointer<In>, from i: Int) -> Int {
        let n = src.count
        guard let base = src.baseAddress else { return n }
        if In.bitWidth == 8 {
            let raw = UnsafeRawPointer(base + i)
            return i + (memchr(raw, 0x5C, n - i).map { UnsafeRawPointer($0) - raw } ?? (n - i))
        }
        var slash = i
        while slash < n, base[slash] != 0x5C { slash += 1 }
        return slash
    }

    /// The scalar the escape at `i` (a backslash) stands for and the code units it takes, or nil
    /// when it stays as written (a malformed `\u`, a backslash ending the text).
    @inline(__always)
    private static func escape<In: FixedWidthInteger & UnsignedInteger>(_ src: UnsafeBufferPointer<In>, at i: Int) -> (UInt32, Int)? {
        let n = src.count
        guard i + 1 < n else { return nil }
        switch UInt32(truncatingIfNeeded: src[i + 1]) {
        case 0x6E, 0x72, 0x74, 0x62, 0x66:  // n r t b f
            return (0x20, 2)
        case 0x75:  // u
            guard let high = hex4(src, at: i + 2) else { return nil }
            if (0xD800..<0xDC00).contains(high), i + 12 <= n, src[i + 6] == 0x5C, src[i + 7] == 0x75, let low = hex4(src, at: i + 8),
                (0xDC00..<0xE000).contains(low)
            {
                return (0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00), 12)
            }
            // A lone surrogate is no scalar: a space.
            return ((0xD800..<0xE000).contains(high) ? 0x20 : high, 6)
        case let next:
            return (next, 2)
        }
    }

    /// The four hex digits at `at`, or nil.
    @inline(__always)
    private static func hex4<In: FixedWidthInteger & UnsignedInteger>(_ src: UnsafeBufferPointer<In>, at: Int) -> UInt32? {
        guard at + 4 <= src.count else { return nil }
        var value: UInt32 = 0
        for k in at..<(at + 4) {
            let c = UInt32(truncatingIfNeeded: src[k])
            let digit: UInt32
            if c &- 0x30 < 10 {
                digit = c &- 0x30
            } else if (c | 0x20) &- 0x61 < 6 {
                digit = (c | 0x20) &- 0x61 &+ 10
            } else {
                return nil
            }
            value = value << 4 | digit
        }
        return value
    }
}
