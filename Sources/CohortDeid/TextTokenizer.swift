import Foundation

/// A word of a text: a run of letters and digits (apostrophes allowed between letters, so
/// `O'Brien` is one word), with the key identifiers are matched by.
struct TextToken: Sendable {
    /// First scalar of the word.
    var start: Int
    /// End of the word without a possessive `'s` (exclusive).
    var coreEnd: Int
    /// End of the word including a possessive `'s` (exclusive).
    var end: Int
    /// Case- and diacritic-folded letters and digits, apostrophes and the possessive removed.
    var key: String
    /// Whether the first scalar is an upper-case letter.
    var isCapitalized: Bool
    /// Letters in the key (digits excluded).
    var letterCount: Int
    var isPossessive: Bool { coreEnd < end }
}

/// Splits text into ``TextToken``s and normalizes identifiers the same way, so a roster name
/// and its mention in a note meet on one key whatever the case, accents or apostrophes.
enum TextTokenizer {
    static func isApostrophe(_ s: Unicode.Scalar) -> Bool {
        s == "'" || s == "\u{2019}" || s == "\u{02BC}" || s == "\u{2018}"
    }

    @inline(__always)
    static func isWordScalar(_ s: Unicode.Scalar) -> Bool {
        let v = s.value
        if v < 0x80 {
            return (v >= 0x30 && v <= 0x39) || (v >= 0x41 && v <= 0x5A) || (v >= 0x61 && v <= 0x7A)
        }
        let p = s.properties
        if p.isAlphabetic { return true }
        switch p.generalCategory {
        case .decimalNumber, .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }

    /// The words of `scalars`.
    static func tokens(_ scalars: [Unicode.Scalar]) -> [TextToken] {
        var result: [TextToken] = []
        let n = scalars.count
        var i = 0
        while i < n {
            guard isWordScalar(scalars[i]) else {
                i += 1
                continue
            }
            let start = i
            while i < n {
                if isWordScalar(scalars[i]) {
                    i += 1
                } else if isApostrophe(scalars[i]), i + 1 < n, isWordScalar(scalars[i + 1]) {
                    i += 1
                } else {
                    break
                }
            }
            let end = i
            var coreEnd = end
            if end - start >= 3, scalars[end - 1] == "s" || scalars[end - 1] == "S", isApostrophe(scalars[end - 2]) {
                coreEnd = end - 2
            }
            let (key, letters) = fold(scalars[start..<coreEnd])
            if key.isEmpty { continue }
            let first = scalars[start]
            let capitalized = first.properties.isUppercase
            result.append(
                TextToken(start: start, coreEnd: coreEnd, end: end, key: key, isCapitalized: capitalized, letterCount: letters))
        }
        return result
    }

    /// The keys of the words of `text`.
    static func keys(_ text: String) -> [String] {
        tokens(Array(text.unicodeScalars)).map(\.key)
    }

    /// Case- and diacritic-folded letters and digits of `scalars`, and how many are letters.
    static func fold(_ scalars: ArraySlice<Unicode.Scalar>) -> (String, Int) {
        var ascii = true
        for s in scalars where s.value >= 0x80 {
            ascii = false
            break
        }
        if ascii {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(scalars.count)
            var letters = 0
            for s in scalars {
                var v = UInt8(s.value)
                if v >= 0x41 && v <= 0x5A { v += 32 }
                if v >= 0x61 && v <= 0x7A {
                    letters += 1
                    bytes.append(v)
                } else if v >= 0x30 && v <= 0x39 {
                    bytes.append(v)
                }
            }
            return (String(decoding: bytes, as: UTF8.self), letters)
        }
        var view = String.UnicodeScalarView()
        for s in scalars where !isApostrophe(s) { view.append(s) }
        let folded = String(view).folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        var out = String.UnicodeScalarView()
        var letters = 0
        for s in folded.unicodeScalars {
            let p = s.properties
            if p.isAlphabetic {
                letters += 1
                out.append(s)
            } else if p.generalCategory == .decimalNumber {
                out.append(s)
            }
        }
        return (String(out), letters)
    }

    /// Whether the text between two words (`gap`) is short enough for them to be one phrase.
    static func isPhraseGap(_ scalars: [Unicode.Scalar], from: Int, to: Int) -> Bool {
        guard to - from <= 3 else { return false }
        for i in from..<to where scalars[i] == "\n" || scalars[i] == "[" || scalars[i] == "]" { return false }
        return true
    }
}

/// A word of a line in a ``LineWorkspace``: positions index the workspace's scalars; the folded
/// key lives in the workspace's key bytes (ASCII words) or its non-ASCII keys.
struct PackedToken: Sendable {
    var start: Int
    var coreEnd: Int
    var end: Int
    /// Offset into `keyBytes` (ASCII key) or index into `nonASCIIKeys`.
    var keyStart: Int
    var keyLength: Int
    /// FNV-1a of the key bytes (ASCII keys only).
    var hash: UInt64
    var isASCII: Bool
    var isCapitalized: Bool
    var isPossessive: Bool { coreEnd < end }
}

extension TextTokenizer {
    /// FNV-1a (64-bit) offset basis and prime; the hash is never 0 (0 marks an empty slot).
    static let hashBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    static let hashPrime: UInt64 = 0x0000_0100_0000_01b3

    @inline(__always)
    static func finishHash(_ h: UInt64) -> UInt64 {
        let mixed = (h ^ (h >> 31)) &* 0x9E37_79B9_7F4A_7C15
        return mixed == 0 ? 1 : mixed
    }

    /// The hash ``tokenize(_:into:)`` gives an ASCII key.
    static func hash<C: Collection<UInt8>>(asciiKey bytes: C) -> UInt64 {
        var h = hashBasis
        for b in bytes { h = (h ^ UInt64(b)) &* hashPrime }
        return finishHash(h)
    }

    @inline(__always)
    static func isWord(_ v: UInt32) -> Bool {
        if v < 0x80 {
            return (v &- 0x30 < 10) || ((v | 0x20) &- 0x61 < 26)
        }
        guard let s = Unicode.Scalar(v) else { return false }
        return isWordScalar(s)
    }

    @inline(__always)
    static func isApostrophe(_ v: UInt32) -> Bool { v == 0x27 || v == 0x2019 || v == 0x02BC || v == 0x2018 }

    /// The words of `scalars`, exactly as ``tokens(_:)`` finds them, without allocating for
    /// ASCII words: keys go to `workspace.keyBytes` (ASCII) or `workspace.nonASCIIKeys`.
    static func tokenize(_ s: UnsafeBufferPointer<UInt32>, into workspace: inout LineWorkspace) {
        workspace.tokens.removeAll(keepingCapacity: true)
        workspace.keyBytes.removeAll(keepingCapacity: true)
        workspace.nonASCIIKeys.removeAll(keepingCapacity: true)
        let n = s.count
        var i = 0
        while i < n {
            let v = s[i]
            guard isWord(v) else {
                i += 1
                continue
            }
            let start = i
            i += 1
            while i < n {
                let c = s[i]
                if isWord(c) {
                    i += 1
                } else if isApostrophe(c), i + 1 < n, isWord(s[i + 1]) {
                    i += 1
                } else {
                    break
                }
            }
            let end = i
            var coreEnd = end
            if end - start >= 3, s[end - 1] == 0x73 || s[end - 1] == 0x53, isApostrophe(s[end - 2]) {
                coreEnd = end - 2
            }
            var ascii = true
            for k in start..<coreEnd where s[k] >= 0x80 {
                ascii = false
                break
            }
            let capitalized: Bool
            if v < 0x80 {
                capitalized = v &- 0x41 < 26
            } else {
                capitalized = Unicode.Scalar(v)?.properties.isUppercase ?? false
            }
            if ascii {
                let keyStart = workspace.keyBytes.count
                var h = hashBasis
                for k in start..<coreEnd {
                    var b = UInt8(truncatingIfNeeded: s[k])
                    if b &- 0x41 < 26 { b |= 0x20 }
                    if b &- 0x61 < 26 || b &- 0x30 < 10 {
                        workspace.keyBytes.append(b)
                        h = (h ^ UInt64(b)) &* hashPrime
                    }
                }
                workspace.tokens.append(
                    PackedToken(
                        start: start, coreEnd: coreEnd, end: end, keyStart: keyStart, keyLength: workspace.keyBytes.count - keyStart,
                        hash: finishHash(h), isASCII: true, isCapitalized: capitalized))
            } else {
                var core: [Unicode.Scalar] = []
                core.reserveCapacity(coreEnd - start)
                for k in start..<coreEnd { core.append(Unicode.Scalar(s[k]) ?? "\u{FFFD}") }
                let (key, _) = fold(core[...])
                if key.isEmpty { continue }
                workspace.nonASCIIKeys.append(key)
                workspace.tokens.append(
                    PackedToken(
                        start: start, coreEnd: coreEnd, end: end, keyStart: workspace.nonASCIIKeys.count - 1, keyLength: 0, hash: 0,
                        isASCII: false, isCapitalized: capitalized))
            }
        }
    }

    /// ``isPhraseGap(_:from:to:)`` on a scalar buffer.
    @inline(__always)
    static func isPhraseGap(_ s: UnsafeBufferPointer<UInt32>, from: Int, to: Int) -> Bool {
        guard to - from <= 3 else { return false }
        var i = from
        while i < to {
            let c = s[i]
            if c == 0x0A || c == 0x5B || c == 0x5D { return false }
            i += 1
        }
        return true
    }
}
