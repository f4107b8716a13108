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
    /// The JSON-unescaped bytes of a plain ASCII line (see ``unescapeASCIIJSON(_:into:)``).
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

    /// Replaces `scalars` by their JSON-unescaped form: `\n`, `\r`, `\t`, `\b`, `\f` become a
    /// space (they separate words), `\u00e9` and surrogate pairs their scalar (a lone surrogate
    /// a space), any other escaped character itself; a malformed `\u` stays as it is.
    mutating func unescapeJSON() {
        guard scalars.contains(0x5C) else { return }
        unescaped.removeAll(keepingCapacity: true)
        scalars.withUnsafeBufferPointer { s in
            let n = s.count
            func hexDigit(_ v: UInt32) -> UInt32? {
                switch v {
                case 0x30...0x39: return v - 0x30
                case 0x41...0x46: return v - 0x41 + 10
                case 0x61...0x66: return v - 0x61 + 10
                default: return nil
                }
            }
            func hex4(_ at: Int) -> UInt32? {
                guard at + 4 <= n else { return nil }
                var value: UInt32 = 0
                for k in at..<(at + 4) {
                    guard let digit = hexDigit(s[k]) else { return nil }
                    value = value << 4 | digit
                }
                return value
            }
            var i = 0
            while i < n {
                let c = s[i]
                guard c == 0x5C, i + 1 < n else {
                    unescaped.append(c)
                    i += 1
                    continue
                }
                let next = s[i + 1]
                switch next {
                case 0x6E, 0x72, 0x74, 0x62, 0x66:  // n r t b f
                    unescaped.append(0x20)
                    i += 2
                case 0x75:  // u
                    if let high = hex4(i + 2) {
                        if (0xD800..<0xDC00).contains(high), i + 12 <= n, s[i + 6] == 0x5C, s[i + 7] == 0x75, let low = hex4(i + 8),
                            (0xDC00..<0xE000).contains(low), let combined = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
                        {
                            unescaped.append(combined.value)
                            i += 12
                        } else if let scalar = Unicode.Scalar(high) {
                            unescaped.append(scalar.value)
                            i += 6
                        } else {
                            unescaped.append(0x20)
                            i += 6
                        }
                    } else {
                        unescaped.append(c)
                        i += 1
                    }
                default:
                    unescaped.append(next)
                    i += 2
                }
            }
        }
        swap(&scalars, &unescaped)
    }

    /// Writes the JSON-unescaped form of the plain ASCII line `bytes` to the start of `out`
    /// (grown when shorter than the line) by exactly the rules of ``unescapeJSON()``, and returns
    /// its length; nil when an escape stands for a non-ASCII scalar (`\u00e9`, a surrogate pair),
    /// so the line must be unescaped as scalars.
    static func unescapeASCIIJSON(_ bytes: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) -> Int? {
        let n = bytes.count
        if out.count < n { out = [UInt8](repeating: 0, count: max(n, out.count * 2)) }
        guard let src = bytes.baseAddress else { return 0 }
        return out.withUnsafeMutableBufferPointer { buffer -> Int? in
            guard let dst = buffer.baseAddress else { return nil }
            @inline(__always) func hex4(_ at: Int) -> UInt32? {
                guard at + 4 <= n else { return nil }
                var value: UInt32 = 0
                for k in at..<(at + 4) {
                    let c = UInt32(src[k])
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
            var i = 0
            var o = 0
            while i < n {
                // Copy up to the next backslash in one go.
                let rest = n - i
                let slash = memchr(src + i, 0x5C, rest).map { UnsafeRawPointer($0) - UnsafeRawPointer(src + i) } ?? rest
                if slash > 0 {
                    (dst + o).update(from: src + i, count: slash)
                    i += slash
                    o += slash
                }
                guard i < n else { break }
                guard i + 1 < n else {  // a backslash ending the line stays
                    dst[o] = 0x5C
                    o += 1
                    i += 1
                    break
                }
                let next = src[i + 1]
                switch next {
                case 0x6E, 0x72, 0x74, 0x62, 0x66:  // n r t b f
                    dst[o] = 0x20
                    o += 1
                    i += 2
                case 0x75:  // u
                    guard let high = hex4(i + 2) else {
                        // A malformed `\u` stays as it is.
                        dst[o] = 0x5C
                        o += 1
                        i += 1
                        continue
                    }
                    if high < 0x80 {
                        dst[o] = UInt8(truncatingIfNeeded: high)
                    } else if (0xD800..<0xE000).contains(high) {
                        // A surrogate pair is a non-ASCII scalar; a lone surrogate is a space.
                        if high < 0xDC00, i + 12 <= n, src[i + 6] == 0x5C, src[i + 7] == 0x75, let low = hex4(i + 8), (0xDC00..<0xE000).contains(low) {
                            return nil
                        }
                        dst[o] = 0x20
                    } else {
                        return nil
                    }
                    o += 1
                    i += 6
                default:
                    dst[o] = next
                    o += 1
                    i += 2
                }
            }
            return o
        }
    }
}
