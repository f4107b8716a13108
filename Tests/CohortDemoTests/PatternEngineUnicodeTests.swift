import CohortCore
@testable import CohortDeid
import Foundation
import Testing

@testable import CohortDemo

/// Non-ASCII text on PCRE2 (``PCRE2Route``) against ICU, written as an adversary would: every
/// scalar of the allow-list held to both engines' definitions, generated texts that put each
/// allowed scalar next to every alternative's edges, texts with a scalar outside the list sent
/// to ICU, and every non-ASCII note of the shared and own corpora through both engines.
struct PatternEngineUnicodeTests {
    /// Every scalar ``PCRE2Route`` lets through with the ASCII translation.
    static let inertScalars: [Unicode.Scalar] = (0x80...0x10_FFFF).compactMap { v in
        Unicode.Scalar(UInt32(v)).flatMap { PCRE2Route.isInert($0.value) ? $0 : nil }
    }

    /// What ICU must never see in an inert scalar: a word character, a space, a digit, a
    /// letter, a mark, a format character, a character ICU's `\b` skips, one a caseless ASCII
    /// literal or the patterns' own non-ASCII literals match, or one with a case.
    static let icuNever = [
        "\\w", "\\s", "\\d", "\\p{L}", "\\p{N}", "\\p{Z}", "\\p{M}", "\\p{Cf}", "\\p{Pc}", "\\p{Grapheme_Extend}",
        "\\p{Alphabetic}", "\\p{White_Space}", "\\p{Cased}", "\\p{Changes_When_Casefolded}", "(?i:[\\x{0}-\\x{7F}])",
        "(?i:é|ß|ss|st|ff)", "[\\u200c\\u200d]",
    ]

    @Test func inertScalarsAreNothingTheTranslationTellsApart() throws {
        let scalars = Self.inertScalars
        // Curly quotes, dashes, the ellipsis, bullets, the degree sign, emoji: in.
        for wanted: Unicode.Scalar in ["’", "“", "–", "—", "…", "•", "°", "😀", "€", "±", "→", "🦀"] {
            #expect(PCRE2Route.isInert(wanted.value), "U+\(String(wanted.value, radix: 16))")
        }
        // Letters, marks, digits, spaces, format characters, emoji modifiers, regional
        // indicators: out.
        for unwanted: Unicode.Scalar in ["é", "ß", "ſ", "\u{212A}", "\u{0301}", "٣", "\u{A0}", "\u{2028}", "\u{200D}", "\u{200C}", "\u{FE0F}", "\u{1F3FB}", "Ⅻ", "ⓐ", "_", "‿", "\u{E000}", "\u{FFFF}", "\u{1F1EB}"] {
            #expect(!PCRE2Route.isInert(unwanted.value), "U+\(String(unwanted.value, radix: 16))")
        }
        #expect(scalars.count > 5_000)
        let text = String(String.UnicodeScalarView(scalars))
        let bytes = Array(text.utf8)
        for probe in Self.icuNever {
            let regex = try NSRegularExpression(pattern: probe)
            let found = regex.matches(in: text, range: NSRange(location: 0, length: text.utf16.count))
            #expect(found.isEmpty, "ICU \(probe): \(found.count) inert scalars, first \(found.first.map { (text as NSString).substring(with: $0.range) } ?? "")")
        }
        // The same shorthands, translated, on PCRE2: nothing either.
        for probe in ["\\w", "\\s", "\\d", "\\p{L}", "\\p{N}", "\\p{Z}", "(?i:[A-Za-z])", "(?i:é)", "(?i:ß)", "(?i:[a-z]+)", "\\b"] {
            let pcre = try PCRE2Expression(pattern: ASCIIPatternTranslation.translate(probe))
            let found = bytes.withUnsafeBufferPointer { WordPatternPass.asciiMatches(pcre, $0, scratch: PCRE2Expression.Scratch(for: pcre)) }
            #expect(found == [], "PCRE2 \(probe)")
        }
        // Each inert scalar is one character to both: `[^a]` matches it whole, once.
        let icuCount = try NSRegularExpression(pattern: "[^a]").numberOfMatches(in: text, range: NSRange(location: 0, length: text.utf16.count))
        let pcre = try PCRE2Expression(pattern: "[^a]")
        let pcreCount = bytes.withUnsafeBufferPointer { WordPatternPass.asciiMatches(pcre, $0, scratch: PCRE2Expression.Scratch(for: pcre))?.count }
        #expect(icuCount == scalars.count && pcreCount == scalars.count)
    }

    /// A text with one scalar outside the allow-list goes to ICU, one with only inert scalars
    /// to PCRE2: with a PCRE2 expression that never matches, only the ICU text is scrubbed.
    @Test(arguments: [
        ("é", false), ("’", true), ("😀", true), ("\u{A0}", false), ("\u{0301}", false), ("٣", false), ("\u{200D}", false),
        ("ß", false), ("\u{212A}", false), ("…", true), ("\u{1F3FB}", false), ("°", true), ("\u{2028}", false), ("🇫🇷", false),
    ])
    func aTextTakesPCRE2OnlyWithInertScalars(scalar: String, pcre: Bool) throws {
        var pass = try #require(PatternEngineAgreementTests.scrubber).patterns
        pass.asciiDetectors = try PCRE2Expression(pattern: "(?!)")
        var counts = ScrubCounts()
        let text = "call\(scalar) 555-123-4567"
        let route = Array(text.utf8).withUnsafeBufferPointer { PCRE2Route.of($0) }
        #expect(route == (pcre ? .ascii : .icu))
        #expect(pass.apply(text, counts: &counts, shiftDays: nil) == (pcre ? text : "call\(scalar) [PHONE]"))
    }

    @Test(arguments: [1 as UInt64, 2, 3])
    func generatedNonASCIITextsAgree(seed: UInt64) throws {
        var generator = UnicodeAgreementTextGenerator(seed: seed, scalars: Self.inertScalars)
        let texts = (0..<12_000).map { _ in generator.text() }
        let routes = texts.map { text in Array(text.utf8).withUnsafeBufferPointer { PCRE2Route.of($0) } }
        let onPCRE2 = zip(texts, routes).filter { !$0.0.utf8.allSatisfy { $0 < 0x80 } && $0.1 == .ascii }.count
        // Most texts are non-ASCII and on PCRE2; some go to ICU (a mark, NBSP, a letter).
        #expect(onPCRE2 > texts.count / 2 && routes.contains(.icu))
        try PatternEngineAgreementTests.expectAgreement(texts, label: "generated non-ASCII, seed \(seed)", everyOffsetOfEvery: 8)
    }

    /// Every inert scalar once, inside an email, a phone number, a date, a URL and a word.
    @Test func everyInertScalarInsideEachKindOfMatch() throws {
        let frames = ["jane\u{0}doe@example.com", "call 555\u{0}123-4567", "on 03/14\u{0}2024", "www.ex\u{0}ample.com/a", "aged\u{0}93", "12\u{0}Maple Street"]
        var texts: [String] = []
        for (k, scalar) in Self.inertScalars.enumerated() {
            texts.append(frames[k % frames.count].replacingOccurrences(of: "\u{0}", with: String(scalar)))
        }
        try PatternEngineAgreementTests.expectAgreement(texts, label: "every inert scalar", everyOffsetOfEvery: 50)
    }

    @Test func sharedCorpusNonASCIINotesAgree() throws {
        guard let corpus = try ExternalCorpusTests.corpus() else { return }
        try Self.expectNonASCIIAgreement(PatternEngineAgreementTests.notes(of: corpus), label: "../shared/deid-corpus")
    }

    @Test func ownCorporaNonASCIINotesAgree() throws {
        let texts = AdversarialCorpus().notes.map(\.text) + PatternEngineAgreementTests.notes(of: TemplateCorpus.make())
            + PatternEngineAgreementTests.notes(of: HeldOutForms.make())
        try Self.expectNonASCIIAgreement(texts, label: "own corpora")
    }

    /// The non-ASCII texts of `texts` through both engines (every start offset of each), with
    /// how many take PCRE2 printed; a disagreement is reported by index only (corpus notes stay
    /// out of the test output).
    static func expectNonASCIIAgreement(_ texts: [String], label: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let scrubber = try #require(PatternEngineAgreementTests.scrubber)
        let comparison = PatternEngineComparison(scrubber: scrubber, oracle: scrubber.onICUOnly())
        let nonASCII = texts.filter { !$0.utf8.allSatisfy { $0 < 0x80 } }
        var onPCRE2 = 0
        var disagreeing: [Int] = []
        for (index, text) in nonASCII.enumerated() {
            if Array(text.utf8).withUnsafeBufferPointer({ PCRE2Route.of($0) }) == .ascii { onPCRE2 += 1 }
            if !comparison.disagreements(text, everyOffset: true).isEmpty { disagreeing.append(index) }
        }
        print("\(label): \(nonASCII.count) non-ASCII texts, \(onPCRE2) on PCRE2, \(nonASCII.count - disagreeing.count) identical")
        #expect(disagreeing.isEmpty, "\(label): non-ASCII texts \(disagreeing.prefix(20)) disagree", sourceLocation: sourceLocation)
    }
}

/// Texts for ``PatternEngineUnicodeTests``: the agreement generator's fragments with allowed
/// scalars right before, after and inside them, and now and then a scalar outside the list.
struct UnicodeAgreementTextGenerator {
    var random: SeededRandom
    let scalars: [Unicode.Scalar]

    init(seed: UInt64, scalars: [Unicode.Scalar]) {
        random = SeededRandom(seed: seed)
        self.scalars = scalars
    }

    static let fragments =
        AgreementTextGenerator.fragments + [
            "Hauptstraße 12", "12 allée des Roses", "3 rue de l’Église", "D’Angelo Street 4", "jane.doe@exämple.com",
            "josé@example.com", "12 O’Neil Close", "Bahnhofstraße 5a", "12 Allée Verte",
        ]
    /// Scalars that must send a text to ICU: letters, marks, non-ASCII digits and spaces,
    /// format characters, emoji modifiers, regional indicators.
    static let outside = ["é", "ß", "ſ", "\u{212A}", "\u{0301}", "٣", "\u{A0}", "\u{2028}", "\u{200D}", "\u{FE0F}", "\u{1F3FB}", "İ", "ü", "🇫🇷", "\u{1F1EB}"]
    static let favourites = ["’", "‘", "“", "”", "–", "—", "…", "•", "°", "😀", "🦀", "€", "±", "→", "«", "»", "©", "§", "¶", "·"]

    mutating func scalar() -> String {
        random.next() % 2 == 0 ? random.pick(Self.favourites) : String(random.pick(scalars))
    }

    mutating func text() -> String {
        var text = ""
        for _ in 0..<(1 + Int(random.next() % 4)) {
            var part = random.next() % 3 == 0 ? random.pick(AgreementTextGenerator.noise) : random.pick(Self.fragments)
            if random.next() % 2 == 0, !part.isEmpty {
                // An allowed scalar inside the fragment.
                let at = Int(random.next() % UInt64(part.count + 1))
                part.insert(contentsOf: scalar(), at: part.index(part.startIndex, offsetBy: at))
            }
            let glue = random.next() % 3 == 0 ? scalar() : random.pick(AgreementTextGenerator.glue)
            text += (text.isEmpty ? "" : glue) + part
        }
        if random.next() % 4 != 0 { text = random.next() % 2 == 0 ? scalar() + text : text + scalar() }
        if random.next() % 10 == 0 {
            let at = Int(random.next() % UInt64(text.count + 1))
            text.insert(contentsOf: random.pick(Self.outside), at: text.index(text.startIndex, offsetBy: at))
        }
        return text
    }
}
