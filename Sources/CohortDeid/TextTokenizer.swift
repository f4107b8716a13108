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
