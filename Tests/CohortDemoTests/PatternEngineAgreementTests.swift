import CohortCore
@testable import CohortDeid
import Foundation
import Testing

@testable import CohortDemo

/// The scrubber's patterns on PCRE2 (ASCII text) against ICU's `NSRegularExpression`, the
/// engine they were written for and the oracle here: from every start offset of every text, the
/// first match of both expressions (its range and alternative) is the same, and the passes and
/// the whole scrubber give the same output and counts. Texts: the shared deid corpus, the own
/// corpora (adversarial, template, held-out forms), the bench generator's notes, and generated
/// strings that put every alternative's edges next to noise (separators, month and street words,
/// vertical tabs, CR, non-ASCII).
struct PatternEngineAgreementTests {
    static let scrubber: Scrubber? = try? Scrubber(roster: AdversarialCorpus(seed: 3, participantCount: 30, plantNotes: 0, cleanNotes: 0).participants)

    @Test func theTranslationAcceptsBothExpressions() throws {
        _ = try ASCIIPatternTranslation.translate(PatternDetectors.pattern)
        _ = try ASCIIPatternTranslation.translate(PatternDetectors.wordPattern)
        // What it cannot vouch for it refuses: the shorthands' uppercase forms, `.`, inline flags,
        // ICU set operations.
        for refused in ["\\S", "a.b", "(?i)a", "[a-z--[aeiou]]", "[[a]]", "\\p{Alphabetic}", "\\1"] {
            #expect(throws: ASCIIPatternTranslation.Refused.self, "\(refused)") { try ASCIIPatternTranslation.translate(refused) }
        }
    }

    /// ICU's behaviours the translation relies on, as this machine's Foundation runs them.
    @Test func icuBehavesAsTheTranslationSays() throws {
        func matches(_ pattern: String, _ text: String) throws -> Bool {
            try NSRegularExpression(pattern: pattern).firstMatch(in: text, range: NSRange(location: 0, length: text.utf16.count)) != nil
        }
        // `\s` matches the vertical tab (the user guide's [\t\n\f\r\p{Z}] does not say so).
        #expect(try matches("^a\\sb$", "a\u{0B}b"))
        #expect(try !matches("^a\\sb$", "a\u{1C}b"))
        // Full case folding: `ß` matches "ss", "SS".
        #expect(try matches("^(?i:straße)$", "STRASSE"))
        // A case-insensitive property is closed under case.
        #expect(try matches("^(?i:\\p{Lu})$", "a"))
        // Opaque bounds: a lookbehind at a range's start sees nothing before it.
        let regex = try NSRegularExpression(pattern: "(?<!x)y")
        #expect(regex.firstMatch(in: "xy", range: NSRange(location: 1, length: 1)) != nil)
    }

    /// ASCII text takes PCRE2 and other text ICU: with a PCRE2 expression that never matches,
    /// only the non-ASCII text is scrubbed.
    @Test func asciiTextTakesPCRE2() throws {
        var scrubber = try #require(Self.scrubber)
        var pass = scrubber.patterns
        pass.asciiDetectors = try PCRE2Expression(pattern: "(?!)")
        var counts = ScrubCounts()
        #expect(pass.apply("call 555-123-4567", counts: &counts, shiftDays: nil) == "call 555-123-4567")
        #expect(pass.apply("café 555-123-4567", counts: &counts, shiftDays: nil) == "café [PHONE]")
        #expect(scrubber.patterns.apply("call 555-123-4567", counts: &counts, shiftDays: nil) == "call [PHONE]")
        // A small string (stored inline, 10 bytes) takes PCRE2 as well.
        #expect(pass.apply("5551234567", counts: &counts, shiftDays: nil) == "5551234567")
        #expect(scrubber.patterns.apply("5551234567", counts: &counts, shiftDays: nil) == "[PHONE]")
        scrubber = scrubber.onICUOnly()
        #expect(scrubber.patterns.asciiDetectors == nil && scrubber.wordPatterns.asciiDetectors == nil)
    }

    /// When PCRE2 gives up (here its JIT stack, on a host name of 40,000 labels), ICU scrubs the
    /// text, and the output is ICU's.
    @Test func aTextPCRE2GivesUpOnGoesToICU() throws {
        let scrubber = try #require(Self.scrubber)
        let text = "see " + String(repeating: "a.", count: 40_000) + "com today"
        let word = try #require(scrubber.wordPatterns.asciiDetectors)
        let outcome = Array(text.utf8).withUnsafeBufferPointer { word.firstMatch(in: $0, from: 0, scratch: PCRE2Expression.Scratch(for: word)) }
        #expect(outcome == .failed)
        var counts = ScrubCounts(), reference = ScrubCounts()
        let out = scrubber.wordPatterns.apply(text, counts: &counts)
        #expect(out == scrubber.onICUOnly().wordPatterns.apply(text, counts: &reference))
        #expect(counts == reference)
    }

    @Test func sharedCorpusAgrees() throws {
        guard let corpus = try ExternalCorpusTests.corpus() else { return }
        let texts = Self.notes(of: corpus)
        #expect(texts.count > 1_000)
        try Self.expectAgreement(texts, label: "../shared/deid-corpus")
    }

    @Test func ownCorporaAgree() throws {
        let adversarial: [String] = AdversarialCorpus().notes.map(\.text)
        let template: [String] = Self.notes(of: TemplateCorpus.make())
        let heldOut: [String] = Self.notes(of: HeldOutForms.make())
        let texts = adversarial + template + heldOut
        #expect(texts.count > 6_000)
        // Every start offset of every tenth note (the notes are long: the cost is quadratic);
        // the passes and the scrubber on all of them.
        try Self.expectAgreement(texts, label: "own corpora", everyOffsetOfEvery: 10)
    }

    @Test func benchNotesAgree() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pcre-bench-notes-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try DemoCohort(seed: 7, participants: 40, days: 30, lastDay: try #require(CivilDate(year: 2026, month: 3, day: 31))).write(to: directory)
        var notes: Set<String> = []
        for file in ["symptoms.csv", "medications.csv", "flares.csv", "environment.csv"] {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\r\n").dropFirst() { notes.insert(Self.lastField(line)) }
        }
        #expect(notes.count > 5)
        try Self.expectAgreement(notes.sorted(), label: "bench generator")
    }

    @Test(arguments: [1 as UInt64, 2, 3, 4])
    func generatedTextsAgree(seed: UInt64) throws {
        var generator = AgreementTextGenerator(seed: seed)
        let texts = (0..<50_000).map { _ in generator.text() }
        let ascii = texts.filter { $0.utf8.allSatisfy { $0 < 0x80 } }.count
        // Both routes are exercised: most texts are ASCII, some are not.
        #expect(ascii > texts.count * 3 / 4 && ascii < texts.count)
        try Self.expectAgreement(texts, label: "generated, seed \(seed)")
    }

    /// The distinct notes and medication texts of `corpus`, in a stable order.
    static func notes(of corpus: ExternalCorpus) -> [String] {
        let texts: Set<String> = Set(corpus.plants.map(\.note)).union(corpus.clean.map(\.note)).union(corpus.medicationProbes.map(\.text))
        return texts.sorted()
    }

    /// The last CSV field of `line` (quotes removed).
    static func lastField(_ line: Substring) -> String {
        guard line.hasSuffix("\"") else { return String(line.split(separator: ",", omittingEmptySubsequences: false).last ?? "") }
        let body = line.dropLast()
        var start = body.endIndex
        var quotes = 0
        for index in body.indices.reversed() {
            if body[index] == "\"" { quotes += 1 } else if quotes % 2 == 1 { break }
            start = index
        }
        return String(body[start...].dropFirst()).replacingOccurrences(of: "\"\"", with: "\"")
    }

    static func expectAgreement(
        _ texts: [String], label: String, everyOffsetOfEvery stride: Int = 1, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let scrubber = try #require(scrubber)
        let oracle = scrubber.onICUOnly()
        var failures = 0
        for (index, text) in texts.enumerated() {
            let problems = PatternEngineComparison(scrubber: scrubber, oracle: oracle).disagreements(text, everyOffset: index % stride == 0)
            if !problems.isEmpty {
                failures += 1
                if failures <= 10 {
                    Issue.record("\(label), text \(index) \(String(reflecting: text)): \(problems.joined(separator: "; "))", sourceLocation: sourceLocation)
                }
            }
        }
        #expect(failures == 0, "\(label): \(failures) of \(texts.count) texts disagree", sourceLocation: sourceLocation)
    }
}

/// One text through both engines.
struct PatternEngineComparison {
    let scrubber: Scrubber
    let oracle: Scrubber

    func disagreements(_ text: String, everyOffset: Bool) -> [String] {
        var problems: [String] = []
        let route = Array(text.utf8).withUnsafeBufferPointer { PCRE2Route.of($0) }
        if everyOffset, let main = route.expression(scrubber.patterns.asciiDetectors, scrubber.patterns.letterDetectors),
            let word = route.expression(scrubber.wordPatterns.asciiDetectors, scrubber.wordPatterns.letterDetectors)
        {
            problems += firstMatches(text, icu: oracle.patterns.detectors, pcre: main, name: "patterns")
            problems += firstMatches(text, icu: oracle.wordPatterns.detectors, pcre: word, name: "word patterns")
            problems += allMatches(text, icu: oracle.wordPatterns.detectors, pcre: word)
        }
        for shift in [nil, 17] as [Int?] {
            var counts = ScrubCounts(), reference = ScrubCounts()
            let out = scrubber.patterns.apply(text, counts: &counts, shiftDays: shift)
            let expected = oracle.patterns.apply(text, counts: &reference, shiftDays: shift)
            if out != expected || counts != reference { problems.append("PatternPass.apply (shift \(String(describing: shift))): \(out) ≠ \(expected)") }
        }
        var counts = ScrubCounts(), reference = ScrubCounts()
        if scrubber.wordPatterns.apply(text, counts: &counts) != oracle.wordPatterns.apply(text, counts: &reference) || counts != reference {
            problems.append("WordPatternPass.apply")
        }
        counts = ScrubCounts()
        reference = ScrubCounts()
        let out = scrubber.scrub(text, counts: &counts, shiftDays: 40)
        let expected = oracle.scrub(text, counts: &reference, shiftDays: 40)
        if out != expected || counts != reference { problems.append("Scrubber.scrub: \(out) ≠ \(expected)") }
        return problems
    }

    /// ICU's first match (range, first group taking part) from `range`, as UTF-8 offsets
    /// (`toUTF8`: UTF-16 offset → UTF-8 offset at each scalar boundary; -1 inside a scalar).
    static func icuMatch(_ regex: NSRegularExpression, _ text: String, _ range: NSRange, _ toUTF8: [Int: Int]) -> PCRE2Expression.Match? {
        guard let m = regex.firstMatch(in: text, options: [], range: range) else { return nil }
        return utf8Match(m, toUTF8)
    }

    static func utf8Match(_ m: NSTextCheckingResult, _ toUTF8: [Int: Int]) -> PCRE2Expression.Match {
        PCRE2Expression.Match(start: toUTF8[m.range.location] ?? -1, end: toUTF8[m.range.location + m.range.length] ?? -1, group: firstGroup(m))
    }

    /// The (UTF-8, UTF-16) offsets of every scalar boundary of `text`, its end included.
    static func scalarBoundaries(_ text: String) -> [(utf8: Int, utf16: Int)] {
        var boundaries: [(utf8: Int, utf16: Int)] = [(0, 0)]
        for scalar in text.unicodeScalars {
            let last = boundaries[boundaries.count - 1]
            boundaries.append((last.utf8 + UTF8.width(scalar), last.utf16 + UTF16.width(scalar)))
        }
        return boundaries
    }

    /// From every start offset (a scalar boundary; ICU: the range from there to the end; PCRE2:
    /// the production code's slice), the same first match.
    func firstMatches(_ text: String, icu: NSRegularExpression, pcre: PCRE2Expression, name: String) -> [String] {
        let bytes = Array(text.utf8)
        let boundaries = Self.scalarBoundaries(text)
        let toUTF8 = Dictionary(uniqueKeysWithValues: boundaries.map { ($0.utf16, $0.utf8) })
        let utf16Count = text.utf16.count
        let scratch = PCRE2Expression.Scratch(for: pcre)
        return bytes.withUnsafeBufferPointer { p in
            for start in boundaries.dropLast() {
                let expected = Self.icuMatch(icu, text, NSRange(location: start.utf16, length: utf16Count - start.utf16), toUTF8)
                let found: PCRE2Expression.Match?
                switch PatternPass.asciiFirstMatch(pcre, p, from: start.utf8, scratch: scratch) {
                case .match(let m): found = m
                case .none: found = nil
                case .failed: return ["\(name) from \(start.utf8): PCRE2 failed"]
                }
                if found != expected { return ["\(name) from \(start.utf8): PCRE2 \(String(describing: found)), ICU \(String(describing: expected))"] }
            }
            return []
        }
    }

    /// `matches(in:)` over the whole text against the word pass's successive searches.
    func allMatches(_ text: String, icu: NSRegularExpression, pcre: PCRE2Expression) -> [String] {
        let found = Array(text.utf8).withUnsafeBufferPointer { WordPatternPass.asciiMatches(pcre, $0, scratch: PCRE2Expression.Scratch(for: pcre)) }
        guard let found else { return ["word matches: PCRE2 failed"] }
        let toUTF8 = Dictionary(uniqueKeysWithValues: Self.scalarBoundaries(text).map { ($0.utf16, $0.utf8) })
        let expected = icu.matches(in: text, range: NSRange(location: 0, length: text.utf16.count)).map { Self.utf8Match($0, toUTF8) }
        return found == expected ? [] : ["word matches: PCRE2 \(found), ICU \(expected)"]
    }

    static func firstGroup(_ m: NSTextCheckingResult) -> Int {
        (1..<m.numberOfRanges).first { m.range(at: $0).location != NSNotFound }.map { $0 - 1 } ?? -1
    }
}
