import CohortCore
import Foundation
import Testing

@testable import CohortDeid

struct PatternDetectorsTests {
    static let pieces = [
        "1", "12", "123", "2025", "14", "03", "80", "555", "4567", "62704", "9", "0", " ", " ", " ", ", ", "-", "/", ".", ":", "::", "+",
        "@", "(", ")", "#", "\t", "\n", "_", "St", "st", "street", "Streets", "Dr", "dr.", "box", "PO", "P.O.", "Box", "May", "march",
        "Sept", "june", "www", "WWW.", "www.", "http", "://", "ftp", "mrn", "MRN:", "patient id", "chart no.", "ssn", "social security",
        "A", "AB", "ABCD", "fe80", "ff", "IL", "CA", "Main", "Elm", "Oak", "x", "th", "rd", "of", "N.", "apt", "suite", "Kate", "pain",
        "took", "tablets", "at", "lane", "Way", "way", "row", "Close", "ter", "é", "٣", "٣٣", "١٢٣٤", "ß", "ſt", "ﬆ", "\u{212A}",
        "İ", "ı", "Zoë", "’", "—", "\u{00A0}", "Jos\u{0301}e", "ünïcode", "Ｍay", "ｗｗｗ.", "＠", "：",
    ]

    /// The pre-check may skip the regular expression only where it finds nothing: generated
    /// near misses of every alternative (dates, phones, MRNs, IPs, URLs, emails, addresses).
    @Test(arguments: [1 as UInt64, 2, 3])
    func skippedTextNeverHasAMatch(seed: UInt64) throws {
        let regex = try PatternDetectors.compile()
        var g = SeededRandom(seed: seed)
        var skipped = 0
        var matched = 0
        for _ in 0..<20_000 {
            var text = ""
            for _ in 0..<Int.random(in: 1...9, using: &g) { text += Self.pieces.randomElement(using: &g) ?? "" }
            let range = NSRange(text.startIndex..<text.endIndex, in: text)
            let hasMatch = regex.firstMatch(in: text, options: [], range: range) != nil
            if hasMatch { matched += 1 }
            // Text the older, coarser pre-check (`mayMatch`) let through and the new one skips
            // must have no match, so scrubbing output is unchanged.
            if PatternDetectors.mayMatch(text), !PatternDetectors.needsRegex(text) {
                skipped += 1
                #expect(!hasMatch, "\(text.debugDescription)")
            }
        }
        #expect(skipped > 1_000)
        #expect(matched > 1_000)
    }

    @Test(arguments: [
        ("pain 6, took ibuprofen at 08:30", false),
        ("Morning stiffness lasted 45 min; rested by the window", false),
        ("slept badly, woke up 3 times", false),
        ("on 3/14 it hurt", true),
        ("moved to 9 Oak Road", true),
        ("PO Box 12", true),
        ("since May 2", true),
        ("+1 55 12 34", true),
        ("see www.example.org", true),
        ("MRN A1b2c", true),
        ("José called at 8", false),
        ("Zoë’s knee — pain 6 at 08:30", false),
        ("straße 12", true),
        ("١٢٣-٤٥-٦٧٨٩ and 1", true),
    ])
    func commonNotesSkipTheRegularExpression(text: String, needed: Bool) {
        #expect(PatternDetectors.needsRegex(text) == needed)
    }
}
