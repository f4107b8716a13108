import Foundation

/// The identifier patterns free text is searched for regardless of the roster: emails, URLs,
/// MRN-like ids, SSNs, IP addresses, dates, phone numbers, street addresses and study-code-like
/// ids. One alternation, compiled once; the first alternative that matches at a position wins,
/// so the order below matters (an email before a URL, an SSN before a phone).
enum PatternDetectors {
    static let month =
        "(?i:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\\.?"
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
            "\\b\\d{4}[-/.]\\d{1,2}[-/.]\\d{1,2}(?:[T ]\\d{1,2}:\\d{2}(?::\\d{2}(?:\\.\\d+)?)?(?:Z|[+-]\\d{2}:?\\d{2})?)?(?!\\d)"
                + "|\\b\\d{1,2}[-/.]\\d{1,2}[-/.](?:\\d{4}|\\d{2})\\b"
                + "|\\b\\d{1,2}\(ordinal)\\s+(?i:of\\s+)?\(month)(?:,?\\s+\\d{4})?\\b"
                + "|\\b\(month)\\s+\\d{1,2}\(ordinal)(?:,?\\s+\\d{4})?\\b"
                + "|\\b\(month),?\\s+\\d{4}\\b"
        ),
        (
            .phone,
            "(?<![\\w+])(?:\\+?1[\\s.-]?)?(?:\\(\\d{3}\\)\\s?|\\d{3}[\\s.-])\\d{3}[\\s.-]\\d{4}(?!\\w)"
                + "|(?<![\\w+])\\+\\d{1,3}(?:[\\s.-]?\\d){6,14}(?!\\w)"
                + "|(?<![\\d\\w])1?\\d{10}(?![\\d\\w])"
        ),
        (
            .address,
            "\\b\\d{1,6}[A-Za-z]?\\s+(?:[NSEWnsew]\\.?\\s+)?(?:[\\p{Lu}\\d][\\p{L}\\d'’.-]*\\s+){1,3}\(streetSuffix)\\b\\.?"
                + "(?:,?\\s*(?i:apt|apartment|suite|ste|unit|fl|floor|#)\\.?\\s*#?\\s*[\\p{L}\\d-]+)?"
                + "|\\b(?i:p\\.?\\s?o\\.?\\s*box)\\s+\\d+\\b"
                + "|\\b\(states)\\s+\\d{5}(?:-\\d{4})?\\b"
        ),
        (.id, "\\b[A-Z]{1,4}-\\d{3,6}\\b"),
    ]

    static func compile() throws -> NSRegularExpression {
        let pattern = alternatives.map { "(\($0.1))" }.joined(separator: "|")
        return try NSRegularExpression(pattern: pattern, options: [])
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
            "row", "crescent", "close",
        ].map { Array($0.utf8) })
    static let monthPrefixes: [[UInt8]] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec", "box"]
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
        let n = p.count
        @inline(__always) func digit(_ k: Int) -> Bool {
            let v = UInt32(p[k])
            if v < 0x80 { return v &- 0x30 < 10 }
            return Unicode.Scalar(v)?.properties.generalCategory == .decimalNumber
        }
        @inline(__always) func alnumOrHyphen(_ k: Int) -> Bool {
            let v = UInt32(p[k])
            return v &- 0x30 < 10 || (v | 0x20) &- 0x61 < 26 || v == 0x2D
        }
        @inline(__always) func lower(_ k: Int) -> UInt32 {
            let v = UInt32(p[k])
            return v &- 0x41 < 26 ? v | 0x20 : v
        }
        var hasDigit = false
        var run = 0
        var colons = 0
        for i in 0..<n {
            if UInt32(p[i]) >= 0x80, foldsToASCII(UInt32(p[i])) { return true }
            if digit(i) {
                hasDigit = true
                run += 1
                if run >= 3 { return true }
                if i + 2 < n, p[i + 1] == 0x2D || p[i + 1] == 0x2F || p[i + 1] == 0x2E, digit(i + 2) { return true }
                if i + 3 < n, alnumOrHyphen(i + 1), alnumOrHyphen(i + 2), alnumOrHyphen(i + 3) { return true }
                continue
            }
            run = 0
            switch p[i] {
            case 0x40: return true  // @
            case 0x3A:  // :
                colons += 1
                if colons >= 2 || (i + 2 < n && p[i + 1] == 0x2F && p[i + 2] == 0x2F) { return true }
            case 0x2B:  // +
                if i + 1 < n, digit(i + 1) { return true }
            case 0x2E:  // www.
                if i >= 3, lower(i - 1) == 0x77, lower(i - 2) == 0x77, lower(i - 3) == 0x77 { return true }
            default: break
            }
        }
        guard hasDigit else { return false }
        var i = 0
        while i < n {
            for word in monthPrefixes where i + word.count <= n {
                var same = true
                for k in 0..<word.count where lower(i + k) != UInt32(word[k]) {
                    same = false
                    break
                }
                if same { return true }
            }
            i += 1
        }
        // Whole runs of ASCII letters, digits and `_` equal to a street suffix.
        var word: [UInt8] = []
        i = 0
        while i <= n {
            if i < n, UInt32(p[i]) < 0x80, (alnumOrHyphen(i) && p[i] != 0x2D) || p[i] == 0x5F {
                word.append(UInt8(truncatingIfNeeded: lower(i)))
            } else {
                if !word.isEmpty, word.count <= 9, streetSuffixWords.contains(word) { return true }
                word.removeAll(keepingCapacity: true)
            }
            i += 1
        }
        return false
    }
}
