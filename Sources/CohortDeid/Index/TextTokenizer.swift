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

    /// The words of `text`, with their keys as strings: the one tokenizer (``tokenize(_:into:)``)
    /// run on the text's scalars. For roster identifiers and the scrubber's rules; the matchers
    /// work on the packed words of a ``LineWorkspace``.
    static func tokens(_ text: String) -> [TextToken] {
        var workspace = LineWorkspace(capacity: text.unicodeScalars.count)
        workspace.load(text)
        return workspace.tokenizeScalars()
    }

    /// The keys of the words of `text`.
    static func keys(_ text: String) -> [String] {
        tokens(text).map(\.key)
    }

    /// How many letters (not digits) a folded key holds: keys hold only letters and decimal digits.
    static func letterCount(ofKey key: String) -> Int {
        var letters = 0
        for s in key.unicodeScalars where s.properties.isAlphabetic { letters += 1 }
        return letters
    }

    /// Latin letters that diacritic folding leaves as they are, written as people type them
    /// without the letter (`Đặng` → `dang`, `Miłosz` → `milosz`, `Þóra` → `thora`).
    static let transliterations: [Unicode.Scalar: String] = [
        "đ": "d", "Đ": "d", "ł": "l", "Ł": "l", "ø": "o", "Ø": "o", "æ": "ae", "Æ": "ae", "ß": "ss", "ı": "i", "þ": "th",
        "Þ": "th", "ð": "d", "Ð": "d", "œ": "oe", "Œ": "oe", "ħ": "h", "Ħ": "h", "ŋ": "ng", "ĸ": "k",
    ]

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
        for s in scalars where !isApostrophe(s) {
            if let latin = transliterations[s] { view.append(contentsOf: latin.unicodeScalars) } else { view.append(s) }
        }
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
}

/// A word of a line in a ``LineWorkspace``: positions index the line's code units (bytes of
/// an ASCII line, scalars otherwise); the folded key lives in the workspace's key bytes (ASCII
/// words) or its non-ASCII keys.
struct PackedToken: Sendable {
    var start = 0
    var coreEnd = 0
    var end = 0
    /// Offset into `keyBytes` (ASCII key) or index into `nonASCIIKeys`.
    var keyStart = 0
    var keyLength = 0
    /// ``TextTokenizer/hashKeyPadded(_:_:)`` of the key bytes (ASCII keys only).
    var hash: UInt64 = 0
    var isASCII = true
    var isCapitalized = false
    var isPossessive: Bool { coreEnd < end }
}

extension TextTokenizer {
    /// The hash of the ASCII key of `count` bytes at `p` (never 0, which marks an empty slot),
    /// when at least eight bytes past them may be read (as in a workspace's key buffer): eight
    /// bytes at a time, the last partial word one masked load, so a word costs a few
    /// multiplications, not one per letter. The one key hash: index and words alike.
    @inline(__always)
    static func hashKeyPadded(_ p: UnsafePointer<UInt8>, _ count: Int) -> UInt64 {
        var h = UInt64(truncatingIfNeeded: count) &* 0x9E37_79B9_7F4A_7C15
        var i = 0
        while i + 8 <= count {
            h = (h ^ UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
            h ^= h >> 32
            i += 8
        }
        if i < count {
            // The key's last bytes as a little-endian word, the bytes after them masked off.
            let word = UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self) & (UInt64.max >> (64 - 8 * UInt64(count - i)))
            h = (h ^ word) &* 0xC4CE_B9FE_1A85_EC53
        }
        h ^= h >> 29
        return h == 0 ? 1 : h
    }

    /// ``hashKeyPadded(_:_:)`` of `bytes` (copied with eight bytes of padding).
    static func hash<C: Collection<UInt8>>(asciiKey bytes: C) -> UInt64 {
        let padded = Array(bytes) + [UInt8](repeating: 0, count: 8)
        return padded.withUnsafeBufferPointer { buffer in
            // The buffer holds at least the eight bytes of padding.
            guard let base = buffer.baseAddress else { return 1 }
            return hashKeyPadded(base, buffer.count - 8)
        }
    }

    /// ASCII letters and digits, then whatever ``isWordScalar(_:)`` says.
    @inline(__always)
    static func isWord(_ v: UInt32) -> Bool {
        if v < 0x80 { return asciiClass[Int(v)] & 1 != 0 }
        guard let s = Unicode.Scalar(v) else { return false }
        return isWordScalar(s)
    }

    /// Per ASCII code: bit 0 letter or digit, bit 1 digit, bit 2 letter, bit 3 upper-case letter.
    static let asciiClass: [UInt8] = (0..<128).map { v -> UInt8 in
        switch v {
        case 0x30...0x39: return 0b0011
        case 0x41...0x5A: return 0b1101
        case 0x61...0x7A: return 0b0101
        default: return 0
        }
    }

    @inline(__always)
    static func isApostrophe(_ v: UInt32) -> Bool { v == 0x27 || v == 0x2019 || v == 0x02BC || v == 0x2018 }

    /// The words of `s` (bytes of an ASCII line or scalars), without allocating for ASCII words: keys go to `workspace.keyBytes` (ASCII) or
    /// `workspace.nonASCIIKeys`; `workspace.tokenCount` words go to `workspace.tokens`.
    static func tokenize<C: FixedWidthInteger & UnsignedInteger>(_ s: UnsafeBufferPointer<C>, into workspace: inout LineWorkspace) {
        let n = s.count
        workspace.nonASCIIKeys.removeAll(keepingCapacity: true)
        reserveBuffers(for: n, in: &workspace)
        var tokenCount = 0
        asciiClass.withUnsafeBufferPointer { table in
            workspace.tokens.withUnsafeMutableBufferPointer { tokens in
                workspace.keyBytes.withUnsafeMutableBufferPointer { keys in
                    guard let keyBase = UnsafePointer(keys.baseAddress) else { return }
                    var keyCount = 0
                    var i = 0
                    while i < n {
                        let v = UInt32(s[i])
                        guard isWord(v, table) else {
                            i += 1
                            continue
                        }
                        let start = i
                        let keyStart = keyCount
                        let firstNonASCII = scanWord(s, from: &i, table, keys, keyCount: &keyCount)
                        let end = i
                        var coreEnd = end
                        if end - start >= 3, s[end - 1] == 0x73 || s[end - 1] == 0x53, isApostrophe(UInt32(s[end - 2])) {
                            coreEnd = end - 2
                        }
                        let capitalized = v < 0x80 ? table[Int(v)] & 0b1000 != 0 : (Unicode.Scalar(v)?.properties.isUppercase ?? false)
                        if firstNonASCII >= coreEnd {
                            // Drop the possessive `s` (the apostrophe added nothing to the key).
                            if coreEnd < end { keyCount -= 1 }
                        } else if let latinEnd = foldLatin(s, start..<coreEnd, into: keys, at: keyStart) {
                            // Apostrophes and Latin letters that fold to ASCII (`’`, `é`, `ü`…).
                            keyCount = latinEnd
                            if keyCount == keyStart { continue }  // an empty key is no word
                        } else {
                            keyCount = keyStart
                            let key = foldedKey(s, start..<coreEnd)
                            if key.isEmpty { continue }
                            workspace.nonASCIIKeys.append(key)
                            tokens[tokenCount] = PackedToken(
                                start: start, coreEnd: coreEnd, end: end, keyStart: workspace.nonASCIIKeys.count - 1, keyLength: 0, hash: 0,
                                isASCII: false, isCapitalized: capitalized)
                            tokenCount += 1
                            continue
                        }
                        tokens[tokenCount] = PackedToken(
                            start: start, coreEnd: coreEnd, end: end, keyStart: keyStart, keyLength: keyCount - keyStart,
                            hash: hashKeyPadded(keyBase + keyStart, keyCount - keyStart), isASCII: true, isCapitalized: capitalized)
                        tokenCount += 1
                    }
                }
            }
        }
        workspace.tokenCount = tokenCount
    }

    /// Words are separated, so there are at most (n + 1) / 2; keys written here take at most
    /// 3 bytes a scalar (1 for ASCII, up to 3 for a folded Latin letter); the 8 bytes of slack let
    /// `hashKeyPadded` read a key's last word in one load.
    private static func reserveBuffers(for n: Int, in workspace: inout LineWorkspace) {
        if workspace.tokens.count < n / 2 + 1 {
            workspace.tokens = Array(repeating: PackedToken(), count: max(n / 2 + 1, workspace.tokens.count * 2))
        }
        if workspace.keyBytes.count < 3 * n + 8 {
            workspace.keyBytes = Array(repeating: 0, count: max(3 * n + 8, workspace.keyBytes.count * 2))
        }
    }

    @inline(__always)
    private static func isWord(_ v: UInt32, _ table: UnsafeBufferPointer<UInt8>) -> Bool { v < 0x80 ? table[Int(v)] & 1 != 0 : isWord(v) }

    /// One pass over the word at `i`: finds its end (left in `i`) while folding its ASCII letters
    /// and digits into `keys` from `keyCount` (apostrophes are not part of the key); returns the
    /// position of its first non-ASCII scalar (`Int.max` when none).
    @inline(__always)
    private static func scanWord<C: FixedWidthInteger & UnsignedInteger>(
        _ s: UnsafeBufferPointer<C>, from i: inout Int, _ table: UnsafeBufferPointer<UInt8>, _ keys: UnsafeMutableBufferPointer<UInt8>,
        keyCount: inout Int
    ) -> Int {
        let n = s.count
        var firstNonASCII = Int.max
        while i < n {
            let c = UInt32(s[i])
            if c < 0x80 {
                let cls = table[Int(c)]
                if cls & 1 != 0 {
                    let folded = UInt8(truncatingIfNeeded: c) | (cls & 0b0100) << 3  // letters to lower case
                    keys[keyCount] = folded
                    keyCount += 1
                    i += 1
                    continue
                }
                if c == 0x27, i + 1 < n, isWord(UInt32(s[i + 1]), table) {
                    i += 1
                    continue
                }
                break
            }
            if isWord(c) || (isApostrophe(c) && i + 1 < n && isWord(UInt32(s[i + 1]), table)) {
                if firstNonASCII == Int.max { firstNonASCII = i }
                i += 1
                continue
            }
            break
        }
        return firstNonASCII
    }

    /// The folded key of a word with scalars no ASCII string folds from (``fold(_:)``).
    private static func foldedKey<C: FixedWidthInteger & UnsignedInteger>(_ s: UnsafeBufferPointer<C>, _ range: Range<Int>) -> String {
        var core: [Unicode.Scalar] = []
        core.reserveCapacity(range.count)
        for k in range { core.append(Unicode.Scalar(UInt32(s[k])) ?? "\u{FFFD}") }
        return fold(core[...]).0
    }

    /// The key ``fold(_:)`` gives each scalar U+00C0–U+024F on its own, when it is ASCII.
    static let latinFolds: [[UInt8]?] = (0xC0..<0x250).map { v -> [UInt8]? in
        guard let scalar = Unicode.Scalar(UInt32(v)) else { return nil }
        let key = fold([scalar][...]).0
        // At most 3 bytes a scalar, so keys never outgrow 3 bytes a scalar (see `tokenize`).
        return key.utf8.allSatisfy { $0 < 0x80 } && key.utf8.count <= 3 ? Array(key.utf8) : nil
    }

    /// Writes the key of the word `s[range]` to `keys` from `at` when every scalar is an ASCII
    /// letter or digit, an apostrophe, or a Latin letter whose fold is ASCII; returns where the
    /// key ends, or nil (the word needs ``fold(_:)``). Folding such a word is folding each scalar
    /// on its own: case and diacritics are per letter, apostrophes are dropped.
    @inline(__always)
    static func foldLatin<C: FixedWidthInteger & UnsignedInteger>(
        _ s: UnsafeBufferPointer<C>, _ range: Range<Int>, into keys: UnsafeMutableBufferPointer<UInt8>, at start: Int
    ) -> Int? {
        var end = start
        var pending: [UInt8] = []
        for k in range {
            let v = UInt32(s[k])
            if v < 0x80 {
                if v &- 0x30 < 10 || (v | 0x20) &- 0x61 < 26 {
                    pending.append(UInt8(truncatingIfNeeded: v | (v &- 0x41 < 26 ? 0x20 : 0)))
                } else if v != 0x27 {
                    return nil
                }
            } else if isApostrophe(v) {
                continue
            } else if v >= 0xC0, v < 0x250, let folded = latinFolds[Int(v) - 0xC0] {
                pending += folded
            } else {
                return nil
            }
        }
        guard start + pending.count <= keys.count else { return nil }  // cannot happen: 3 bytes a scalar at most
        for b in pending {
            keys[end] = b
            end += 1
        }
        return end
    }

    /// Whether the text between two words (`from..<to` in `s`) is short enough for them to be
    /// one phrase: at most three code units, none a line break or a typed token's bracket.
    @inline(__always)
    static func isPhraseGap<C: FixedWidthInteger & UnsignedInteger>(_ s: UnsafeBufferPointer<C>, from: Int, to: Int) -> Bool {
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
