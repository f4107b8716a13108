import Foundation

/// The identifier patterns free text is searched for regardless of the roster: emails, URLs,
/// MRN-like ids, SSNs, IP addresses, dates, phone numbers, street addresses and study-code-like
/// ids. One alternation, compiled once; the first alternative that matches at a position wins,
/// so the order below matters (an email before a URL, an SSN before a phone).
enum PatternDetectors {
    /// Month names; "may" only capitalized (`May 14`, not "you may 2").
    static let month =
        "(?:(?i:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)|May|MAY)\\.?"
    static let weekday =
        "(?:(?i:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)\\.?,?\\s+(?:the\\s+)?)?"
    static let extensionSuffix = "(?:\\s*(?i:x|ext\\.?|extension)\\s*\\d{1,5})?"
    static let ordinal = "(?i:st|nd|rd|th)?"
    static let streetSuffix =
        "(?i:street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|place|pl|way|terrace|ter|circle|cir|parkway|pkwy|highway|hwy|square|sq|trail|trl|alley|row|crescent|close)"
    static let states =
        "(?:A[KLRZ]|C[AOT]|D[CE]|FL|GA|HI|I[ADLN]|K[SY]|LA|M[ADEINOST]|N[CDEHJMVY]|O[HKR]|PA|RI|S[CD]|T[NX]|UT|V[AT]|W[AIVY])"

    /// (token, pattern) in priority order; patterns use no capturing groups.
    static let alternatives: [(ScrubToken, String)] = [
        (.email, "<?(?:mailto:)?[\\p{L}\\p{N}._%+-]+@[\\p{L}\\p{N}-]+(?:\\.[\\p{L}\\p{N}-]+)*\\.\\p{L}{2,}>?"),
        (.url, "(?i:\\b(?:https?|ftp)://|\\bwww\\.)[^\\s<>\"']*[^\\s<>\"'.,;:!?)\\]]"),
        (
            .mrn,
            "\\b(?i:mrn|medical\\s+record(?:\\s+(?:number|no\\.?|#))?|patient\\s+id|chart\\s+(?:number|no\\.?|#))\\s*[:#]?\\s*#?\\s*[A-Za-z]{0,3}-?\\d[A-Za-z0-9-]{3,}"
        ),
        (
            .ssn,
            "\\b(?i:ssn|social\\s+security(?:\\s+(?:number|no\\.?|#))?)\\s*[:#]?\\s*\\d{3}[\\s-]?\\d{2}[\\s-]?\\d{4}\\b|\\b\\d{3}-\\d{2}-\\d{4}\\b|\\b\\d{3} \\d{2} \\d{4}\\b"
        ),
        (
            .ip,
            "\\b(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\b|(?<![\\w:])(?:(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|(?=[0-9A-Fa-f:]*::)(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4})(?![\\w:])"
        ),
        (
            .date,
            "\\b\(weekday)(?:"
                + "\\d{4}[-/.]\\d{1,2}[-/.]\\d{1,2}(?:[T ]\\d{1,2}:\\d{2}(?::\\d{2}(?:\\.\\d+)?)?(?:Z|[+-]\\d{2}:?\\d{2})?)?(?!\\d)"
                + "|\\d{1,2}[-/.]\\d{1,2}[-/.](?:\\d{4}|\\d{2})\\b(?![-/.]\\d)"
                + "|\\d{1,2}\(ordinal)\\s+(?i:of\\s+)?\(month)(?:,?\\s+\\d{4})?\\b"
                + "|\(month)\\s+\\d{1,2}\(ordinal)(?:,?\\s+\\d{4})?\\b"
                + "|\(month),?\\s+\\d{4}\\b"
                + "|(?<![/\\d.])\\d{1,2}/\\d{1,2}(?![/\\d])"
                + "|(?<![\\d.])\\d{1,2}\\.\\d{1,2}\\.(?![\\d])"
                + ")"
        ),
        (
            .age,
            "\\b(?i:aged?|age:)\\s+(?:9\\d|1[01]\\d)\\b(?!\\s*(?:%|/|\\.\\d))"
                + "|\\b(?:9\\d|1[01]\\d)\\s*-?\\s*(?i:years?[\\s-]old|year-old|yrs?[\\s-]old|y/o|y\\.o\\.|yo)(?!\\w)"
        ),
        (
            .phone,
            "(?<![\\w+])(?:\\+?1[\\s.-]?)?(?:\\(\\d{3}\\)\\s?|\\d{3}[\\s.-])\\d{3}[\\s.-]\\d{4}\(extensionSuffix)(?!\\w)"
                // National and international formats (FR, UK, DE, IN, AU…): 9 to 15 digits in all,
                // checked after matching (PatternDetectors.isPhone).
                + "|(?<![\\w+/.])(?:\\+\\d{1,3}[ .-]?(?:\\(0\\)[ .-]?)?\\d{1,5}[ .\\-/]|\\(\\d{2,5}\\)[ .-]?|\\d{2,6}[ .\\-/])"
                + "\\d{2,8}(?:[ .-]\\d{2,8}){0,4}\(extensionSuffix)(?![\\w/])"
                + "|(?<![\\w+])\\+\\d{1,3}(?:[\\s.-]?\\d){6,14}\(extensionSuffix)(?!\\w)"
                + "|(?<![\\d\\w])1?\\d{10}(?![\\d\\w])"
        ),
        (
            .address,
            "\\b\\d{1,6}[A-Za-z]?\\s+(?:[NSEWnsew]\\.?\\s+)?(?:[\\p{Lu}\\d][\\p{L}\\d'’-]*\\s+){1,3}\(streetSuffix)\\b\\.?"
                + "(?:,?\\s*(?i:apt|apartment|suite|ste|unit|fl|floor|#)\\.?\\s*#?\\s*[\\p{L}\\d-]+)?"
                + "|\\b\\d{1,4}(?:\\s*(?:bis|ter))?,?\\s+(?i:rue|chemin|impasse|quai|allée|allee|bd)\\s+(?:(?i:de|du|des|la|le|l'|d')\\s*)*\\p{Lu}[\\p{L}'’-]*"
                + "|\\b\\p{Lu}[\\p{L}-]*(?i:straße|strasse|str\\.|weg|allee|platz|gasse)\\s+\\d{1,4}[a-z]?\\b"
                + "|\\b(?i:p\\.?\\s?o\\.?\\s*box)\\s+\\d+\\b"
                + "|\\b(?:\\p{Lu}[\\p{L}'’-]*(?:\\s+\\p{Lu}[\\p{L}'’-]*){0,2},?\\s+)?\(states)\\s+\\d{5}(?:-\\d{4})?\\b"
                // Postcodes: UK (SW1A 1AA), and DE/FR five digits before a city (10115 Berlin).
                + "|\\b(?:[A-Z]{1,2}\\d[A-Z\\d]?|GIR)\\s?\\d[A-Z]{2}\\b"
                + "|\\b\\d{5}\\s+\\p{Lu}\\p{Ll}+(?:[ -]\\p{Lu}\\p{Ll}+)?"
        ),
        (
            .device,
            "\\b(?i:serial(?:\\s+(?:number|no\\.?|#))?|s/n|sn)\\s*[:#]?\\s*(?=[A-Za-z-]*\\d)[A-Za-z0-9-]{5,}"
        ),
        (.id, "\\b[A-Z]{1,4}-\\d{3,6}\\b"),
    ]

    /// The alternatives as one expression, each in its own capture group (in order).
    static var pattern: String { alternatives.map { "(\($0.1))" }.joined(separator: "|") }

    static func compile() throws -> NSRegularExpression {
        try NSRegularExpression(pattern: pattern, options: [])
    }

    /// ``pattern`` for PCRE2 on the text of `scope` (``ASCIIPatternTranslation``).
    static func compileASCII(for scope: ASCIIPatternTranslation.Scope = .ascii) throws -> PCRE2Expression {
        try PCRE2Expression(pattern: ASCIIPatternTranslation.translate(pattern, for: scope))
    }

    /// Whether any detector can match: all need a digit, `@`, `://` or `www.`. Skipping the
    /// regular expression for the (many) notes without them keeps scrubbing fast.
    static func mayMatch(_ text: String) -> Bool {
        var previous: UInt8 = 0
        var ws = 0
        for byte in text.utf8 {
            if (byte >= 48 && byte <= 57) || byte == 64 { return true }
            if byte == 58 || (byte == 47 && previous == 47) { return true }  // ':' (IPv6, URLs)
            if byte == 119 || byte == 87 { ws += 1 } else if byte == 46 && ws >= 3 { return true } else { ws = 0 }
            previous = byte
        }
        return false
    }

    /// Whether the regular expression must run on `text`: ``mayMatch(_:)``, and then one of the
    /// conditions some alternative cannot match without. Every alternative needs one of: `@`
    /// (email); `://` or `www.` (URL); 3 digits in a row (SSN, phone, ID, ISO date, ZIP, the
    /// `\d{4}` of phones); a digit, `-`, `/` or `.`, digit (numeric dates, IPv4); two colons
    /// (IPv6); `+` and a digit (international phone); a digit followed by 3 of `[A-Za-z0-9-]`
    /// (MRN); or a digit together with a month name, `box` or a whole-word street suffix
    /// (written dates, PO boxes, street addresses). `\d` is any decimal digit, as in the
    /// expression. A letter whose case mappings hold an ASCII letter (`ß`, `ſ`, `ﬆ`, the
    /// Kelvin sign…) could match a case-insensitive literal, so text with one always runs.
    static func needsRegex(_ text: String) -> Bool {
        guard mayMatch(text) else { return false }
        if let ascii = text.utf8.withContiguousStorageIfAvailable({ bytes -> Bool? in
            bytes.allSatisfy { $0 < 0x80 } ? detectorsMayMatch(bytes) : nil
        }), let ascii {
            return ascii
        }
        let scalars = text.unicodeScalars.map(\.value)
        return scalars.withUnsafeBufferPointer { detectorsMayMatch($0) }
    }

    static let streetSuffixWords: Set<[UInt8]> = Set(
        [
            "street", "st", "avenue", "ave", "road", "rd", "boulevard", "blvd", "lane", "ln", "drive", "dr", "court", "ct", "place", "pl",
            "way", "terrace", "ter", "circle", "cir", "parkway", "pkwy", "highway", "hwy", "square", "sq", "trail", "trl", "alley",
            "row", "crescent", "close", "rue", "chemin", "impasse", "quai", "allee", "bd",
        ].map { Array($0.utf8) })
    /// Endings of German street names (Hauptstraße is caught by its `ß`).
    static let germanStreetEndings: [[UInt8]] = ["strasse", "str", "weg", "allee", "platz", "gasse"].map { Array($0.utf8) }
    static let monthPrefixes: [[UInt8]] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec", "box", "serial", "s/n"]
        .map { Array($0.utf8) }

    /// Whether a non-ASCII scalar could take part in a case-insensitive match of an ASCII
    /// literal: one of its case mappings holds an ASCII letter.
    static func foldsToASCII(_ v: UInt32) -> Bool {
        if v < 0x250 { return latinFoldsToASCII[Int(v)] }
        return computeFoldsToASCII(v)
    }

    /// ``foldsToASCII(_:)`` for U+0000–U+024F (Latin scripts, most non-ASCII letters in notes).
    static let latinFoldsToASCII: [Bool] = (0..<0x250).map { computeFoldsToASCII(UInt32($0)) }

    static func computeFoldsToASCII(_ v: UInt32) -> Bool {
        guard v >= 0x80, let scalar = Unicode.Scalar(v) else { return false }
        let p = scalar.properties
        for mapping in [p.lowercaseMapping, p.uppercaseMapping, p.titlecaseMapping] where mapping.utf8.contains(where: { $0 < 0x80 }) {
            return true
        }
        return false
    }

    /// The conditions of ``needsRegex(_:)`` on the scalars (or ASCII bytes) of a text.
    static func detectorsMayMatch<C: FixedWidthInteger & UnsignedInteger>(_ p: UnsafeBufferPointer<C>) -> Bool {
        switch shapeSignals(p) {
        case .some: return true
        case .noDigit: return false
        case .digitsOnly: return containsMonthPrefix(p) || containsStreetWord(p)
        }
    }

    /// What the characters alone say: a pattern may match (`some`), or it may only when a month
    /// name or street word is there too (`digitsOnly`), or the text has no digit (`noDigit`).
    private enum ShapeSignal { case some, digitsOnly, noDigit }

    @inline(__always)
    private static func isDigit<C: FixedWidthInteger & UnsignedInteger>(_ p: UnsafeBufferPointer<C>, _ k: Int) -> Bool {
        let v = UInt32(p[k])
        if v < 0x80 { return v &- 0x30 < 10 }
        return Unicode.Scalar(v)?.properties.generalCategory == .decimalNumber
    }

    @inline(__always)
    private static func isAlnumOrHyphen<C: FixedWidthInteger & UnsignedInteger>(_ p: UnsafeBufferPointer<C>, _ k: Int) -> Bool {
        let v = UInt32(p[k])
        return v &- 0x30 < 10 || (v | 0x20) &- 0x61 < 26 || v == 0x2D
    }

    @inline(__always)
    private static func lower<C: FixedWidthInteger & UnsignedInteger>(_ p: UnsafeBufferPointer<C>, _ k: Int) -> UInt32 {
        let v = UInt32(p[k])
        return v &- 0x41 < 26 ? v | 0x20 : v
    }

    /// Digits in a run of three, `9x`, digit groups, postcode inward codes, `@`, `://`, two
    /// colons, `+digit`, `www.`, a scalar that folds to ASCII.
    private static func shapeSignals<C: FixedWidthInteger & UnsignedInteger>(_ p: UnsafeBufferPointer<C>) -> ShapeSignal {
        let n = p.count
        var hasDigit = false
        var run = 0
        var colons = 0
        for i in 0..<n {
            if UInt32(p[i]) >= 0x80, foldsToASCII(UInt32(p[i])) { return .some }
            if isDigit(p, i) {
                hasDigit = true
                run += 1
                if run >= 3 { return .some }
                if run == 2, UInt32(p[i - 1]) == 0x39 { return .some }  // 9x: an age over 89
                if i + 2 < n, p[i + 1] == 0x2D || p[i + 1] == 0x2F || p[i + 1] == 0x2E || p[i + 1] == 0x20, isDigit(p, i + 2) { return .some }
                // A digit and two capitals: the inward code of a UK postcode (SW1A 1AA).
                if i + 2 < n, UInt32(p[i + 1]) &- 0x41 < 26, UInt32(p[i + 2]) &- 0x41 < 26 { return .some }
                if i + 3 < n, isAlnumOrHyphen(p, i + 1), isAlnumOrHyphen(p, i + 2), isAlnumOrHyphen(p, i + 3) { return .some }
                continue
            }
            run = 0
            switch p[i] {
            case 0x40: return .some  // @
            case 0x3A:  // :
                colons += 1
                if colons >= 2 || (i + 2 < n && p[i + 1] == 0x2F && p[i + 2] == 0x2F) { return .some }
            case 0x2B:  // +
                if i + 1 < n, isDigit(p, i + 1) { return .some }
            case 0x2E:  // www.
                if i >= 3, lower(p, i - 1) == 0x77, lower(p, i - 2) == 0x77, lower(p, i - 3) == 0x77 { return .some }
            default: break
            }
        }
        return hasDigit ? .digitsOnly : .noDigit
    }

    private static func containsMonthPrefix<C: FixedWidthInteger & UnsignedInteger>(_ p: UnsafeBufferPointer<C>) -> Bool {
        let n = p.count
        for i in 0..<n {
            for word in monthPrefixes where i + word.count <= n {
                var same = true
                for k in 0..<word.count where lower(p, i + k) != UInt32(word[k]) {
                    same = false
                    break
                }
                if same { return true }
            }
        }
        return false
    }

    /// Whole runs of ASCII letters, digits and `_` equal to a street suffix.
    private static func containsStreetWord<C: FixedWidthInteger & UnsignedInteger>(_ p: UnsafeBufferPointer<C>) -> Bool {
        let n = p.count
        var word: [UInt8] = []
        for i in 0...n {
            if i < n, UInt32(p[i]) < 0x80, (isAlnumOrHyphen(p, i) && p[i] != 0x2D) || p[i] == 0x5F {
                word.append(UInt8(truncatingIfNeeded: lower(p, i)))
            } else {
                if !word.isEmpty, word.count <= 9, streetSuffixWords.contains(word) { return true }
                if word.count >= 4, germanStreetEndings.contains(where: { word.count > $0.count && word.suffix($0.count).elementsEqual($0) }) {
                    return true
                }
                word.removeAll(keepingCapacity: true)
            }
        }
        return false
    }
}

extension PatternDetectors {
    static let topLevelDomains =
        "com|org|net|edu|gov|mil|int|io|info|biz|me|co|uk|us|ca|au|in|de|fr|nl|ie|ch|at|be|es|it|se|no|dk|fi|nz|za|jp|cn|br|mx"
    /// Domains a bare host name is recognized by (English words such as `in`, `it`, `no`, `me`
    /// are left out: "ok.No pain" is no host name); lower case only.
    static let bareDomains = "com|org|net|edu|gov|io|info|biz|co\\.uk|org\\.uk|ac\\.uk|nhs\\.uk|uk|ca|au|de|fr|nl|ie|ch|es|se|dk|fi|nz|za|jp"
    static let obfuscatedDot = "(?:\\s*(?i:\\[dot\\]|\\(dot\\)|\\{dot\\}|\\[\\.\\])\\s*|\\s+(?i:dot)\\s+)"
    static let obfuscatedAt = "(?:\\s*(?i:\\[at\\]|\\(at\\)|\\{at\\}|\\[@\\]|\\(@\\))\\s*|\\s+(?i:at)\\s+)"

    /// Detectors that need no digit, kept out of the main expression so its pre-check stays
    /// cheap: obfuscated emails (`jane dot doe at gmail dot com`, `jane[at]example[dot]com`) and
    /// bare domains with or without a path (`example.com/path`).
    static let wordAlternatives: [(ScrubToken, String)] = [
        (
            .email,
            "(?<![\\p{L}\\p{N}._%+-])[\\p{L}\\p{N}_%+-]+(?:(?:\(obfuscatedDot)|\\.)[\\p{L}\\p{N}_%+-]+)*\(obfuscatedAt)"
                + "[\\p{L}\\p{N}-]+(?:(?:\(obfuscatedDot)|\\.)[\\p{L}\\p{N}-]+)*(?:\(obfuscatedDot)|\\.)(?i:\(topLevelDomains))\\b"
        ),
        (
            .url,
            "(?<![\\p{L}\\p{N}@.-])(?:[A-Za-z0-9][A-Za-z0-9-]*\\.)+(?:\(bareDomains))\\b(?![.-]?[\\p{L}\\p{N}])"
                + "(?:/[^\\s<>\"']*[^\\s<>\"'.,;:!?)\\]])?"
        ),
    ]

    /// The word alternatives as one expression, each in its own capture group (in order).
    static var wordPattern: String { wordAlternatives.map { "(\($0.1))" }.joined(separator: "|") }

    static func compileWordDetectors() throws -> NSRegularExpression {
        try NSRegularExpression(pattern: wordPattern, options: [])
    }

    /// ``wordPattern`` for PCRE2 on the text of `scope` (``ASCIIPatternTranslation``).
    static func compileASCIIWordDetectors(for scope: ASCIIPatternTranslation.Scope = .ascii) throws -> PCRE2Expression {
        try PCRE2Expression(pattern: ASCIIPatternTranslation.translate(wordPattern, for: scope))
    }

    /// Whether a word detector can match `text`: it holds a `.` followed by a letter, or the word
    /// `dot`, or `at` in brackets. Every word alternative needs one of them.
    static func wordDetectorsMayMatch(_ text: String) -> Bool {
        if let result = text.utf8.withContiguousStorageIfAvailable({ wordDetectorsMayMatch(bytes: $0) }) { return result }
        return Array(text.utf8).withUnsafeBufferPointer { wordDetectorsMayMatch(bytes: $0) }
    }

    static func wordDetectorsMayMatch(bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = bytes.count
        @inline(__always) func lower(_ k: Int) -> UInt8 { bytes[k] &- 0x41 < 26 ? bytes[k] | 0x20 : bytes[k] }
        var i = 0
        while i < n {
            let b = bytes[i]
            if b == 0x2E, i + 1 < n, lower(i + 1) &- 0x61 < 26, i > 0, bytes[i - 1] != 0x20 { return true }
            if (b == 0x5B || b == 0x28 || b == 0x7B), i + 2 < n, (lower(i + 1) == 0x61 && lower(i + 2) == 0x74) || bytes[i + 1] == 0x40 || bytes[i + 1] == 0x2E {
                return true
            }
            if lower(i) == 0x64, i + 2 < n, lower(i + 1) == 0x6F, lower(i + 2) == 0x74 { return true }  // "dot"
            i += 1
        }
        return false
    }
}

extension PatternDetectors {
    /// Whether a phone-number match has 9 to 15 digits before its extension (the national
    /// formats' pattern also matches shorter runs of numbers, such as `10 000`).
    static func isPhone(_ match: Substring) -> Bool {
        var digits = 0
        for c in match {
            if c.isLetter { break }  // x123, ext. 12
            if c.isASCII, c.isNumber { digits += 1 }
        }
        return (9...15).contains(digits)
    }
}
