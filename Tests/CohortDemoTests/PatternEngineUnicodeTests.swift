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
    static let inertScalars: [Unicode.Scalar] = scalars(of: .inert)
    /// Every scalar ``PCRE2Route`` lets through with the letters translation.
    static let plainLetters: [Unicode.Scalar] = scalars(of: .letter)

    static func scalars(of kind: PCRE2Route.ScalarClass) -> [Unicode.Scalar] {
        (0x80...0x10_FFFF).compactMap { v in Unicode.Scalar(UInt32(v)).flatMap { PCRE2Route.scalarClass($0.value) == kind ? $0 : nil } }
    }

    /// What ICU must never see in an inert scalar: a word character, a space, a digit, a
    /// letter, a mark, a format character, a character ICU's `\b` skips, one a caseless ASCII
    /// literal or the patterns' own non-ASCII literals match, or one with a case.
    static let icuNever = [
        "\\w", "\\s", "\\d", "\\p{L}", "\\p{N}", "\\p{Z}", "\\p{M}", "\\p{Cf}", "\\p{Pc}", "\\p{Grapheme_Extend}",
        "\\p{Alphabetic}", "\\p{White_Space}", "\\p{Cased}", "\\p{Changes_When_Casefolded}", "(?i:[\\x{0}-\\x{7F}])",
        "(?i:é|ß|ss|st|ff)", "[\\u200c\\u200d]",
    ]

    @Test func theLettersTranslationAcceptsBothExpressionsAndRefusesTheRest() throws {
        _ = try ASCIIPatternTranslation.translate(PatternDetectors.pattern, for: .letters)
        _ = try ASCIIPatternTranslation.translate(PatternDetectors.wordPattern, for: .letters)
        // ICU closes a caseless property or `\w` under case and PCRE2 does not; a caseless
        // letter with a multi-scalar case (`ŉ` → `ʼN`) or a caseless class holding a cased
        // letter would need full folding.
        for refused in ["(?i:\\p{Lu})", "(?i:\\w)", "(?i:[\\p{L}])", "(?i:ŉ)", "(?i:[é])", "\\S", "a.b", "(?i)a", "\\p{Alphabetic}"] {
            #expect(throws: ASCIIPatternTranslation.Refused.self, "\(refused)") { try ASCIIPatternTranslation.translate(refused, for: .letters) }
        }
        #expect(try ASCIIPatternTranslation.translate("(?i:allée|straße)\\b", for: .letters) == "(?i:allée|stra(?:ss)e)(?:(?<=[A-Za-z0-9_\\p{L}])(?![A-Za-z0-9_\\p{L}])|(?<![A-Za-z0-9_\\p{L}])(?=[A-Za-z0-9_\\p{L}]))")
    }

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
    /// or plain letters to PCRE2: with PCRE2 expressions that never match, only the ICU text is
    /// scrubbed.
    @Test(arguments: [
        ("é", PCRE2Route.letters), ("’", .ascii), ("😀", .ascii), ("\u{A0}", .icu), ("\u{0301}", .icu), ("٣", .icu), ("\u{200D}", .icu),
        ("ß", .icu), ("\u{212A}", .icu), ("…", .ascii), ("\u{1F3FB}", .icu), ("°", .ascii), ("\u{2028}", .icu), ("🇫🇷", .icu),
        ("ẞ", .icu), ("ſ", .icu), ("İ", .icu), ("ı", .icu), ("ŉ", .icu), ("ﬁ", .icu), ("Ω", .letters), ("\u{2126}", .letters), ("ǅ", .letters),
        ("Ж", .letters), ("東", .letters), ("ㄱ", .letters), ("\u{1100}", .icu), ("가", .letters), ("\u{0E33}", .icu), ("ﾞ", .icu),
        ("e\u{0301}", .icu), ("é’", .letters), ("\u{1E921}", .letters), ("\u{1DF25}", .icu),
    ])
    func aTextTakesPCRE2OnlyWithAllowedScalars(scalar: String, expected: PCRE2Route) throws {
        var pass = try #require(PatternEngineAgreementTests.scrubber).patterns
        pass.asciiDetectors = try PCRE2Expression(pattern: "(?!)")
        pass.letterDetectors = try PCRE2Expression(pattern: "(?!)")
        var counts = ScrubCounts()
        let text = "call\(scalar) 555-123-4567"
        let route = Array(text.utf8).withUnsafeBufferPointer { PCRE2Route.of($0) }
        #expect(route == expected)
        #expect(pass.apply(text, counts: &counts, shiftDays: nil) == (expected != .icu ? text : "call\(scalar) [PHONE]"))
    }

    /// Every plain letter is, to ICU and to the letters translation on PCRE2, the same: a word
    /// character and a letter of the same case class, no space, digit or mark, matched by no
    /// caseless ASCII literal and by `(?i:é)` only as `é` and `É`; and `\b` falls in the same
    /// places between letters, inert scalars and ASCII.
    @Test func plainLettersAreTheSameToBothEngines() throws {
        let letters = Self.plainLetters
        #expect(letters.count > 100_000)
        let text = String(String.UnicodeScalarView(letters))
        let probes = ["\\w", "\\p{L}", "\\p{Lu}", "\\p{Ll}", "\\s", "\\d", "\\p{N}", "\\p{Z}", "(?i:[a-z])", "(?i:é)", "(?i:ß)", "(?i:x|ext|st|ss)", "(?i:allée)", "[^\\s<>\"']", "\\b"]
        for probe in probes {
            let (icu, pcre) = try Self.bothMatches(probe, in: text)
            #expect(icu == pcre, "\(probe): ICU \(icu.count) matches, PCRE2 \(pcre.count)")
        }
        #expect(try Self.bothMatches("\\w", in: text).icu.count == letters.count)
        let pairs = (97...122).flatMap { a in (97...122).map { b in String(UnicodeScalar(UInt8(a))) + String(UnicodeScalar(UInt8(b))) } }
        for never in ["\\p{M}", "\\p{Cf}", "\\p{Grapheme_Extend}", "\\p{White_Space}", "\\p{Nd}", "(?i:[\\x{0}-\\x{7F}])", "(?i:" + pairs.joined(separator: "|") + "|ffi|ffl)"] {
            let found = try NSRegularExpression(pattern: never).numberOfMatches(in: text, range: NSRange(location: 0, length: text.utf16.count))
            #expect(found == 0, "ICU \(never) matches \(found) plain letters")
        }
        // `\b` between letters, inert scalars, ASCII letters and digits, spaces.
        var mixed = ""
        for (k, letter) in letters.enumerated() where k % 7 == 0 {
            mixed += String(letter) + ["", "’", "a", "1", " ", "_", "…", "-", "😀"][k % 9]
        }
        let (icu, pcre) = try Self.bothMatches("\\b", in: mixed)
        #expect(icu == pcre && icu.count > 10_000)
    }

    /// `probe` on ICU and, translated for plain letters, on PCRE2: every match over the whole
    /// text, as UTF-8 ranges.
    static func bothMatches(_ probe: String, in text: String) throws -> (icu: [Range<Int>], pcre: [Range<Int>]) {
        let toUTF8 = Dictionary(uniqueKeysWithValues: PatternEngineComparison.scalarBoundaries(text).map { ($0.utf16, $0.utf8) })
        let icu = try NSRegularExpression(pattern: probe).matches(in: text, range: NSRange(location: 0, length: text.utf16.count)).map {
            (toUTF8[$0.range.location] ?? -1)..<(toUTF8[$0.range.location + $0.range.length] ?? -1)
        }
        let expression = try PCRE2Expression(pattern: ASCIIPatternTranslation.translate(probe, for: .letters))
        let pcre = Array(text.utf8).withUnsafeBufferPointer { WordPatternPass.asciiMatches(expression, $0, scratch: PCRE2Expression.Scratch(for: expression)) }
        return (icu, (pcre ?? []).map { $0.start..<$0.end })
    }

    /// Every plain letter below U+3000 (Latin, Greek, Cyrillic, Armenian, Hebrew, Arabic, Indic,
    /// …) and every 40th above, inside six kinds of match.
    @Test func plainLettersInsideEachKindOfMatch() throws {
        let frames = ["jane\u{0}doe@example.com", "\u{0}Hauptstraße 12", "12 allée \u{0}Verte", "www.ex\u{0}ample.com/a", "aged\u{0}93", "12 \u{0}Maple Street"]
        var texts: [String] = []
        for (k, letter) in Self.plainLetters.enumerated() where letter.value < 0x3000 || k % 40 == 0 {
            texts.append(frames[k % frames.count].replacingOccurrences(of: "\u{0}", with: String(letter)))
        }
        #expect(texts.count > 8_000)
        try PatternEngineAgreementTests.expectAgreement(texts, label: "plain letters", everyOffsetOfEvery: 50)
    }

    /// A match that ends inside a Character (before a combining mark or an emoji modifier) is
    /// replaced on ICU's route too, and the text is scrubbed on after it: the date is shifted,
    /// the email after it found.
    @Test(arguments: ["\u{0301}", "\u{1F3FB}", "\u{FE0F}"])
    func aMatchEndingInsideACharacterIsReplaced(follower: String) throws {
        let scrubber = try #require(PatternEngineAgreementTests.scrubber)
        let text = "seen 03/14\(follower) and jane.doe@example.com"
        var counts = ScrubCounts()
        #expect(scrubber.patterns.apply(text, counts: &counts, shiftDays: 40) == "seen 04/23\(follower) and [EMAIL]")
        #expect(counts.total == 2)
    }

    @Test(arguments: [1 as UInt64, 2, 3])
    func generatedNonASCIITextsAgree(seed: UInt64) throws {
        var generator = UnicodeAgreementTextGenerator(seed: seed, scalars: Self.inertScalars + Self.plainLetters.filter { $0.value < 0x3000 })
        let texts = (0..<12_000).map { _ in generator.text() }
        let routes = texts.map { text in Array(text.utf8).withUnsafeBufferPointer { PCRE2Route.of($0) } }
        let onPCRE2 = zip(texts, routes).filter { !$0.0.utf8.allSatisfy { $0 < 0x80 } && $0.1 != .icu }.count
        // Most texts are non-ASCII and on PCRE2 (both translations); some go to ICU (a mark,
        // NBSP, a letter with a multi-scalar case).
        #expect(onPCRE2 > texts.count / 2 && routes.contains(.icu) && routes.contains(.letters) && routes.contains(.ascii))
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
        var routes: [PCRE2Route: Int] = [:]
        var outside: [String: Int] = [:]
        var disagreeing: [Int] = []
        for (index, text) in nonASCII.enumerated() {
            routes[Array(text.utf8).withUnsafeBufferPointer({ PCRE2Route.of($0) }), default: 0] += 1
            // What sends a text to ICU: the general category of its first scalar outside the list.
            if let first = text.unicodeScalars.first(where: { !$0.isASCII && PCRE2Route.scalarClass($0.value) == .other }) {
                outside["\(first.properties.generalCategory)", default: 0] += 1
            }
            if !comparison.disagreements(text, everyOffset: true).isEmpty { disagreeing.append(index) }
        }
        let counts = "\(routes[.ascii] ?? 0) inert only, \(routes[.letters] ?? 0) with plain letters, \(routes[.icu] ?? 0) on ICU"
        print("\(label): \(nonASCII.count) non-ASCII texts: \(counts) (\(outside.sorted { $0.key < $1.key })); \(nonASCII.count - disagreeing.count) identical")
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
            "josé@example.com", "12 O’Neil Close", "Bahnhofstraße 5a", "12 Allée Verte", "12 ALLÉE Émile", "Müllerstrasse 7",
            "Zoë Åström", "Łódź 90-001", "10115 Ñandú", "12 Élan Road", "Περίπατος 5", "aged 93…", "“93 yo”", "ÉÈ-1234",
            "Straßenbahnweg 3", "José.García@hospital.es", "jörg dot müller at web dot de",
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
