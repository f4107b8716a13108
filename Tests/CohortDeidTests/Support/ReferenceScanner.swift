import CohortCore
import Foundation

@testable import CohortDeid

/// A word as the reference tokenizer finds it.
struct RefToken {
    var start: Int
    var coreEnd: Int
    var end: Int
    var key: String
    var isCapitalized: Bool
    var letterCount: Int
    var isPossessive: Bool { coreEnd < end }
}

/// The residual scanner as it was before it worked on bytes (one `[Unicode.Scalar]` array and
/// one `String` key per word, dictionary lookups by string): frozen here as the oracle the
/// differential tests compare the fast scanner against. It shares only the roster index's
/// data (phrases, phone digits, birth dates), not its matching code.
struct ReferenceScanner {
    let index: IdentifierIndex.Source
    /// The index's phrases by first key (built once: the source keeps them in compiled-ready form).
    let phrases: [String: [IdentifierIndex.Source.Phrase]]
    private static let markers = Set(ScrubToken.allCases.map(\.rawValue))

    init(roster: [Participant], mode: IdentifierIndex.Mode = .scanner) {
        index = IdentifierIndex.Source(roster: roster, mode: mode)
        phrases = index.phrasesByFirstKey()
    }

    /// Updated deliberately with the scan of issue #13: phones are found by their last 7–10
    /// digits (``hasScannerPhone(in:)``), and a vocabulary surname alone as a capitalized
    /// possessive (`Field's`).
    static let revision = 2

    /// Findings for `lines` of a file named `name`, in line and kind order.
    func findings(_ lines: [String], file name: String, isJSON: Bool) -> [ResidualFinding] {
        var result: [ResidualFinding] = []
        for (number, line) in lines.enumerated() {
            for kind in kinds(inLine: line, isJSON: isJSON).sorted() {
                result.append(ResidualFinding(file: name, line: number + 1, kind: kind))
            }
        }
        return result
    }

    /// The kinds of identifier in one line of text (`isJSON`: unescape JSON strings first).
    func kinds(inLine line: String, isJSON: Bool = false) -> Set<IdentifierKind> {
        var result: Set<IdentifierKind> = []
        let text = isJSON ? Self.unescapeJSON(line) : line
        let scalars = Array(text.unicodeScalars)
        if hasScannerPhone(in: scalars) { result.insert(.phone) }
        if !birthDateRanges(in: scalars).isEmpty { result.insert(.birthDate) }
        let tokens = Self.tokens(scalars)
        let markers = Self.markers
        let isMarker = { (token: RefToken) in
            token.start > 0 && scalars[token.start - 1] == "[" && token.end < scalars.count && scalars[token.end] == "]"
                && markers.contains(String(String.UnicodeScalarView(scalars[token.start..<token.end])))
        }
        let found = matches(in: scalars, tokens: tokens) { t in isMarker(tokens[t]) }
        for match in found { result.insert(match.kind) }
        // Not before a disease or calendar word (`Bell's palsy`), as the scrubber decides.
        for (t, token) in tokens.enumerated() where token.isPossessive && token.isCapitalized && !isMarker(token) && index.possessiveNames.contains(token.key) {
            let next = t + 1 < tokens.count ? tokens[t + 1].key : ""
            if !Scrubber.eponymHeads.contains(next) && !ClinicalVocabulary.calendar.contains(next) { result.insert(.name) }
        }
        // A dictionary-word name capitalized inside a sentence.
        for t in tokens.indices.dropFirst() where tokens[t].isCapitalized && !isMarker(tokens[t]) && index.capitalizedNames.contains(tokens[t].key)
            && !ClinicalVocabulary.calendar.contains(tokens[t].key)
        {
            let between = scalars[tokens[t - 1].end..<tokens[t].start]
            if !between.contains(where: { ".!?\n\r:;\"(\u{2022}[]".unicodeScalars.contains($0) }) { result.insert(.name) }
        }
        return result
    }

    /// Whether a run of digit groups (joined by phone separators), from any group on, has 7–10
    /// digits equal to a roster phone's last 7–10, or 11–15 digits ending in its last 10.
    func hasScannerPhone(in scalars: [Unicode.Scalar]) -> Bool {
        var runs: [[String]] = [[]]
        var lastEnd = -1
        let n = scalars.count
        var i = 0
        while i < n {
            guard scalars[i].value >= 48 && scalars[i].value <= 57 else {
                i += 1
                continue
            }
            let start = i
            while i < n, scalars[i].value >= 48, scalars[i].value <= 57 { i += 1 }
            if lastEnd >= 0, !Self.isPhoneGap(scalars, from: lastEnd, to: start) { runs.append([]) }
            if (start > 0 && Self.isLetter(scalars[start - 1])) || (i < n && Self.isLetter(scalars[i])) {
                runs.append([])
                lastEnd = -1
                continue
            }
            runs[runs.count - 1].append(String(String.UnicodeScalarView(scalars[start..<i])))
            lastEnd = i
        }
        for run in runs where run.joined().count >= 7 {
            for g in run.indices {
                var digits = ""
                for h in g..<run.count {
                    digits += run[h]
                    if digits.count > 15 { break }
                    if digits.count >= 7, index.phoneSuffixes.contains(String(digits.suffix(min(digits.count, 10)))),
                        digits.count > 10 || index.phoneSuffixes.contains(digits)
                    {
                        return true
                    }
                }
            }
        }
        return false
    }

    /// The identifier phrases in `tokens` (leftmost, longest first; no overlaps); a phrase
    /// `accept` refuses gives way to the next shorter one at the same word.
    func matches(
        in scalars: [Unicode.Scalar], tokens: [RefToken], skip: (Int) -> Bool = { _ in false },
        accept: (IdentifierIndex.Match) -> Bool = { _ in true }
    ) -> [IdentifierIndex.Match] {
        var result: [IdentifierIndex.Match] = []
        var i = 0
        while i < tokens.count {
            if skip(i) {
                i += 1
                continue
            }
            var matched = false
            if let candidates = phrases[tokens[i].key] {
                for phrase in candidates {
                    if phrase.requiresCapital, !tokens[i].isCapitalized { continue }
                    let count = phrase.keys.count
                    guard i + count <= tokens.count else { continue }
                    var fits = true
                    for j in 1..<max(count, 1) where count > 1 {
                        let previous = tokens[i + j - 1]
                        let token = tokens[i + j]
                        if token.key != phrase.keys[j]
                            || !ReferenceScanner.isPhraseGap(scalars, from: previous.end, to: token.start)
                        {
                            fits = false
                            break
                        }
                    }
                    if fits, accept(IdentifierIndex.Match(firstToken: i, lastToken: i + count - 1, kind: phrase.kind)) {
                        result.append(IdentifierIndex.Match(firstToken: i, lastToken: i + count - 1, kind: phrase.kind))
                        i += count
                        matched = true
                        break
                    }
                }
            }
            if !matched { i += 1 }
        }
        return result
    }

    /// Runs of digits (with phone separators between them) that carry a roster phone number,
    /// as scalar ranges: the scrubber's rule (a local 7-digit number, or 10 digits or more
    /// ending in a full one; its index holds the phones' last 7 and last 10 digits).
    func phoneRanges(in scalars: [Unicode.Scalar]) -> [Range<Int>] {
        guard !index.phoneSuffixes.isEmpty else { return [] }
        var result: [Range<Int>] = []
        var groups: [(start: Int, end: Int)] = []
        func flush() {
            defer { groups.removeAll(keepingCapacity: true) }
            guard !groups.isEmpty else { return }
            var g = 0
            while g < groups.count {
                var digits = ""
                var found: Int?
                var h = g
                while h < groups.count {
                    for k in groups[h].start..<groups[h].end { digits.unicodeScalars.append(scalars[k]) }
                    if digits.count > 15 { break }
                    if (digits.count == 7 && index.phoneSuffixes.contains(digits))
                        || (digits.count >= 10 && index.phoneSuffixes.contains(String(digits.suffix(10))))
                    {
                        found = h
                    }
                    h += 1
                }
                if let found {
                    result.append(groups[g].start..<groups[found].end)
                    g = found + 1
                } else {
                    g += 1
                }
            }
        }
        let n = scalars.count
        var i = 0
        while i < n {
            let s = scalars[i]
            if s.value >= 48 && s.value <= 57 {
                let start = i
                while i < n, scalars[i].value >= 48, scalars[i].value <= 57 { i += 1 }
                if let last = groups.last, !Self.isPhoneGap(scalars, from: last.end, to: start) { flush() }
                // Digits glued to letters (an MRN `A1234567`, `14T08`) are not part of a phone number.
                if (start > 0 && Self.isLetter(scalars[start - 1])) || (i < n && Self.isLetter(scalars[i])) {
                    flush()
                    continue
                }
                groups.append((start, i))
            } else {
                i += 1
            }
        }
        flush()
        return result
    }

    private static func isLetter(_ s: Unicode.Scalar) -> Bool { s.properties.isAlphabetic }

    private static func isPhoneGap(_ scalars: [Unicode.Scalar], from: Int, to: Int) -> Bool {
        guard to - from >= 1, to - from <= 3 else { return to == from }
        for i in from..<to {
            switch scalars[i] {
            case " ", "-", ".", "(", ")", "+", "\u{00A0}", "/": continue
            default: return false
            }
        }
        return true
    }

    /// Numeric dates (`1980-03-14`, `03/14/1980`, `14.03.1980`, `3/14/80`) equal to a roster
    /// birth date, as scalar ranges.
    func birthDateRanges(in scalars: [Unicode.Scalar]) -> [Range<Int>] {
        guard !index.birthDays.isEmpty else { return [] }
        var result: [Range<Int>] = []
        let n = scalars.count
        func number(at i: Int) -> (value: Int, length: Int)? {
            var j = i
            var value = 0
            while j < n, j - i < 5, scalars[j].value >= 48, scalars[j].value <= 57 {
                value = value * 10 + Int(scalars[j].value - 48)
                j += 1
            }
            return j > i ? (value, j - i) : nil
        }
        var i = 0
        while i < n {
            let isDigit = scalars[i].value >= 48 && scalars[i].value <= 57
            if !isDigit || (i > 0 && scalars[i - 1].value >= 48 && scalars[i - 1].value <= 57) {
                i += 1
                continue
            }
            guard let a = number(at: i), a.length <= 4, i + a.length < n else {
                i += 1
                continue
            }
            let sep = scalars[i + a.length]
            guard sep == "/" || sep == "-" || sep == ".", let b = number(at: i + a.length + 1), b.length <= 2 else {
                i += 1
                continue
            }
            let cStart = i + a.length + 1 + b.length
            guard cStart < n, scalars[cStart] == sep, let c = number(at: cStart + 1), c.length <= 4 else {
                i += 1
                continue
            }
            let end = cStart + 1 + c.length
            if end < n, scalars[end].value >= 48, scalars[end].value <= 57 {
                i += 1
                continue
            }
            var candidates: [(Int, Int, Int)] = []
            if a.length == 4 {
                candidates.append((a.value, b.value, c.value))
            } else if c.length == 4 || c.length == 2 {
                candidates.append((c.value, a.value, b.value))
                candidates.append((c.value, b.value, a.value))
            }
            let shortYear = c.length == 2 && a.length != 4
            let hit = candidates.contains { year, month, day in
                let monthDay = month * 100 + day
                return shortYear ? index.birthDaysShortYear[monthDay]?.contains(year) == true : index.birthDays[monthDay]?.contains(year) == true
            }
            if hit { result.append(i..<end) }
            i = end
        }
        return result
    }

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
    static func tokens(_ scalars: [Unicode.Scalar]) -> [RefToken] {
        var result: [RefToken] = []
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
                RefToken(start: start, coreEnd: coreEnd, end: end, key: key, isCapitalized: capitalized, letterCount: letters))
        }
        return result
    }


    /// Case- and diacritic-folded letters and digits of `scalars`, and how many are letters:
    /// each scalar's key from ``CaseFoldTable`` (Unicode full case folding, marks removed,
    /// computed by `scripts/generate-case-folds.py` with Python's unicodedata), so this oracle
    /// shares no code with `TextTokenizer.fold`, which folds through Foundation. Where the two
    /// differ is decided and asserted in CaseFoldTableTests (none on Latin, Greek, Cyrillic).
    /// A scalar the table's Unicode version does not assign is not a letter: it folds to nothing.
    static func fold(_ scalars: ArraySlice<Unicode.Scalar>) -> (String, Int) {
        let table = CaseFoldTable.shared
        var out = String.UnicodeScalarView()
        var letters = 0
        for s in scalars {
            for k in (table.key(s) ?? "").unicodeScalars {
                out.append(k)
                if k.properties.generalCategory != .decimalNumber { letters += 1 }
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

    /// `text` with JSON string escapes (`\"`, `\\`, `\/`, `\n`, `\u00e9`, surrogate pairs) decoded.
    static func unescapeJSON(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "\\")) else { return text }
        let scalars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        func hex4(_ at: Int) -> UInt32? {
            guard at + 4 <= scalars.count else { return nil }
            var value: UInt32 = 0
            for k in at..<(at + 4) {
                guard let digit = Int(String(scalars[k]), radix: 16) else { return nil }
                value = value << 4 | UInt32(digit)
            }
            return value
        }
        while i < scalars.count {
            let s = scalars[i]
            guard s == "\\", i + 1 < scalars.count else {
                out.append(s)
                i += 1
                continue
            }
            let next = scalars[i + 1]
            switch next {
            case "n", "r", "t", "b", "f":
                out.append(" ")
                i += 2
            case "u":
                if let high = hex4(i + 2) {
                    if (0xD800..<0xDC00).contains(high), i + 12 <= scalars.count, scalars[i + 6] == "\\",
                        scalars[i + 7] == "u", let low = hex4(i + 8), (0xDC00..<0xE000).contains(low),
                        let combined = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
                    {
                        out.append(combined)
                        i += 12
                    } else if let scalar = Unicode.Scalar(high) {
                        out.append(scalar)
                        i += 6
                    } else {
                        out.append(" ")
                        i += 6
                    }
                } else {
                    out.append(s)
                    i += 1
                }
            default:
                out.append(next)
                i += 2
            }
        }
        return String(out)
    }
}
