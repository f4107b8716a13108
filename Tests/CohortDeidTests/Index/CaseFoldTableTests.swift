import Foundation
import Testing

@testable import CohortDeid

/// `TextTokenizer.fold` (Foundation's case- and diacritic-insensitive folding) checked against
/// `Fixtures/case-folds.txt`, which `scripts/generate-case-folds.py` computes with Python's
/// `unicodedata`: full case folding, canonical decomposition without combining marks, letters
/// and digits kept. The two share no code.
///
/// The rule, decided and asserted here: on the scripts a roster's names are written in
/// (``agreedScope``: every Latin block, Greek and Coptic, Cyrillic, fullwidth forms, the Latin
/// ligatures) the tokenizer folds exactly as Unicode full case folding does — ẞ, ſ and ﬁ
/// included. Outside it, the tokenizer differs from the table only in the documented ways of
/// ``Difference``; each difference is one of them, and nothing else is accepted.
struct CaseFoldTableTests {
    /// Where the tokenizer and Unicode full case folding agree scalar for scalar.
    static let agreedScope: [ClosedRange<UInt32>] = [
        0x0000...0x0362,  // Basic Latin … the combining diacritics (Latin-1, Extended-A/B, IPA, spacing modifiers)
        0x0370...0x052F,  // Greek and Coptic, Cyrillic, Cyrillic Supplement
        0x1D00...0x1DBF,  // Phonetic Extensions
        0x1E00...0x1EFF,  // Latin Extended Additional (ẞ U+1E9E included)
        0x1F00...0x1F7F, 0x1FB0...0x1FB1, 0x1FB8...0x1FBB, 0x1FD0...0x1FEF, 0x1FF8...0x1FFB,  // Greek Extended without the iota subscripts
        0x2C60...0x2C7F, 0xA720...0xA7FF, 0xAB30...0xAB6F,  // Latin Extended-C, -D, -E
        0xFB00...0xFB06,  // Latin ligatures (ﬁ)
        0xFF00...0xFFEF,  // Halfwidth and Fullwidth Forms
    ]

    /// The ways the tokenizer may differ from full case folding outside ``agreedScope``.
    enum Difference: String, CaseIterable {
        /// Foundation's diacritic folding removes only some combining marks: a mark or symbol
        /// Unicode counts as alphabetic (the combining Latin small letters U+0363–U+036F, Hebrew
        /// and Arabic points, Indic vowel signs, circled letters) stays in the key, where the
        /// table drops every combining mark and symbol.
        case keepsAlphabeticMark
        /// A letter whose mark is not one Foundation removes (Arabic hamza, Hebrew dagesh) or an
        /// old letter form (Cyrillic U+1C80–U+1C88) stays itself, lower-cased.
        case keepsLetterWhole
        /// Greek iota subscript (ypogegrammeni, prosgegrammeni): Foundation removes it as a
        /// diacritic; full case folding writes it as ι.
        case dropsIotaSubscript
        /// Cherokee: Foundation folds to the small letters, full case folding to the capitals.
        case cherokeeCase
    }

    static func difference(_ scalar: Unicode.Scalar, tokenizer: String, table: String) -> Difference? {
        let v = scalar.value
        if (0x13A0...0x13FF).contains(v) || (0xAB70...0xABBF).contains(v) { return .cherokeeCase }
        if tokenizer + "ι" == table { return .dropsIotaSubscript }
        if table.isEmpty, !tokenizer.isEmpty, scalar.properties.isAlphabetic { return .keepsAlphabeticMark }
        if tokenizer == String(scalar).lowercased() { return .keepsLetterWhole }
        return nil
    }

    /// Every scalar the table assigns, whose key differs from the tokenizer's.
    static let differences: [(scalar: Unicode.Scalar, tokenizer: String, table: String)] = {
        var result: [(Unicode.Scalar, String, String)] = []
        CaseFoldTable.shared.forEach { scalar, expected in
            let folded = TextTokenizer.fold([scalar][...]).0
            if folded != expected { result.append((scalar, folded, expected)) }
        }
        return result.sorted { $0.0.value < $1.0.value }
    }()

    @Test func theTableIsFromAKnownUnicodeVersionAndCoversTheLetters() {
        let table = CaseFoldTable.shared
        #expect(!table.unicodeVersion.isEmpty)
        #expect(table.key("A") == "a")
        #expect(table.key("\u{0301}") == "")
        #expect(table.key("中") == "中")
    }

    @Test func theTokenizerAgreesWithFullCaseFoldingOnTheScriptsOfNames() {
        let inScope = Self.differences.filter { d in Self.agreedScope.contains { $0.contains(d.scalar.value) } }
        #expect(inScope.isEmpty, "\(inScope.prefix(20).map { "U+\(String($0.scalar.value, radix: 16)) \($0.tokenizer) vs \($0.table)" })")
    }

    /// The three letters an NFD-and-lower-case rewrite got wrong: full case folding and the
    /// tokenizer both write them as people type them without the letter.
    @Test(arguments: [("ẞ", "ss"), ("ſ", "s"), ("ﬁ", "fi"), ("ß", "ss"), ("İ", "i"), ("Ǆ", "ǆ")])
    func lettersCaseFoldingTurnsIntoOthers(letter: String, key: String) throws {
        let scalar = try #require(letter.unicodeScalars.first)
        #expect(CaseFoldTable.shared.key(scalar) == key)
        #expect(TextTokenizer.fold([scalar][...]).0 == key)
    }

    @Test func everyOtherDifferenceIsADocumentedOne() {
        var counts: [Difference: Int] = [:]
        var undocumented: [String] = []
        for d in Self.differences {
            if let kind = Self.difference(d.scalar, tokenizer: d.tokenizer, table: d.table) {
                counts[kind, default: 0] += 1
            } else {
                undocumented.append("U+\(String(d.scalar.value, radix: 16, uppercase: true)) tokenizer \(d.tokenizer.debugDescription), table \(d.table.debugDescription)")
            }
        }
        #expect(undocumented.isEmpty, "\(undocumented.count): \(undocumented.prefix(30))")
        print("case-fold differences outside the agreed scope, by kind: \(Difference.allCases.map { "\($0.rawValue) \(counts[$0] ?? 0)" })")
    }
}
