import CohortCore
import Foundation
import Testing

@testable import CohortDeid

/// The scan's shortcut for values of digit-led words (``DigitWordPhrases``, issue 28, seventh
/// round) against the plain route: every value it decides gets the kinds
/// ``ResidualScanner/kindMask(utf8:isJSON:freeText:_:)`` gives, on values made to meet the
/// roster (birth dates in timestamps and numeric forms, phone digits, MRN digits, house numbers)
/// and on rosters whose identifiers are themselves digit-led words.
struct ResidualScannerDigitWordTests {
    /// Two participants whose MRNs are digit-led words only (`2025-12-13` and `12 345678`), so
    /// a timestamp of that day and a value with those numbers must be left to the plain route.
    static let digitRoster: [Participant] = [
        PlantedRoster.participant(
            "00000000-0000-4000-8000-000000000011", code: "P-0011", name: "Ines Halvorsen", email: "ines@example.org",
            phone: "555-010-2025", birth: "2001-02-03", address: "2025 Harbor Blvd, Capital City, IL 60001", zip: "60001",
            mrn: "2025-12-13", devices: ["Band 2025 SN77Q41"]),
        PlantedRoster.participant(
            "00000000-0000-4000-8000-000000000012", code: "P-0012", name: "Tomas Okafor", email: "t.okafor@example.org",
            phone: "+44 20 7946 0018", birth: "1969-12-31", address: "12 Oak Road, Springfield, IL 62704", zip: "62704",
            mrn: "12 345678", devices: []),
    ]

    /// Values of digit-led words (and near misses that are not) built from the roster's
    /// identifiers and at random.
    static func values(roster: [Participant], seed: UInt64, count: Int) -> [String] {
        var g = ScanTextGenerator(roster: roster, seed: seed)
        var out: [String] = []
        for _ in 0..<count {
            var value = digitValue(&g)
            switch g.number(0...9) {
            case 0: value = g.pick(["T", "x", "Smith ", "A", "é", "'", "\\n", "Jane "]) + value
            case 1: value += g.pick(["'s", " Garcia", "Z", "\\", "ü", " 10D", "th"])
            default: break
            }
            out.append(value)
        }
        return out
    }

    static func digitValue(_ g: inout ScanTextGenerator) -> String {
        let identities = g.identities
        let identity = g.pick(identities).1
        let date = identity.birthDate ?? CivilDate(daysSinceEpoch: 0)
        let mm = String(format: "%02d", date.month), dd = String(format: "%02d", date.day)
        let phone = String((identity.phone ?? "").filter(\.isNumber))
        let time = String(format: "T%02d:%02d:%02d", g.number(0...23), g.number(0...59), g.number(0...59))
        let zone = g.pick(["Z", "+01:00", "-05:00", ".123Z", ".5+05:30", ""])
        switch g.number(0...13) {
        case 0: return "\(date.year)-\(mm)-\(dd)" + time + zone
        case 1: return "\(date.year)-\(mm)-\(dd)"
        case 2: return "\(mm)/\(dd)/\(date.year)"
        case 3: return "\(dd).\(mm).\(String(format: "%02d", date.year % 100))"
        case 4: return g.pick([phone, String(phone.suffix(7)), String(phone.suffix(10)), "(\(phone.prefix(3))) \(phone.dropFirst(3))"])
        case 5: return String((identity.mrn ?? "").drop(while: { !$0.isNumber }))
        case 6: return identity.mrn ?? ""
        case 7: return String(identity.address?.prefix { $0 != " " } ?? "")
        case 8: return identity.zip ?? ""
        case 9: return String(format: "%04d-%02d-%02d", g.number(1900...2030), g.number(1...12), g.number(1...31)) + time + zone
        case 10: return String(g.number(0...99_999_999)) + g.pick(["", ".5", ".25", "-3", " 12"])
        case 11: return g.pick(["10D", "14th", "4F7K2Q9", "2025-12-13", "12 345678", "2025 12 13", "77 1", "1e9", "0x1F"])
        case 12: return "\(date.day) \(g.pick(["3", "03", "12"])) \(date.year)"
        default: return String(format: "%02d:%02d", g.number(0...23), g.number(0...59))
        }
    }

    @Test(arguments: [(1 as UInt64, false), (2, true), (3, false)])
    func theShortcutGivesThePlainRoutesKinds(seed: UInt64, digitIdentifiers: Bool) {
        let roster = PlantedRoster.participants + Fixtures.roster(count: 40, seed: 5) + (digitIdentifiers ? Self.digitRoster : [])
        let scanner = ResidualScanner(roster: roster, threads: 1)
        var workspace = LineWorkspace()
        var decided = 0, decidedHits = 0, leftWithPhrases = 0, mismatches: [String] = []
        for value in Self.values(roster: roster, seed: seed, count: 6_000) {
            let bytes = Array(value.utf8)
            for isJSON in [false, true] {
                for freeText in [false, true] {
                    let plain = bytes.withUnsafeBufferPointer { scanner.kindMask(utf8: $0, isJSON: isJSON, freeText: freeText, &workspace) }
                    let short = bytes.withUnsafeBufferPointer { scanner.digitWordMask($0, freeText: freeText, &workspace) }
                    if let short {
                        decided += 1
                        if short != 0 { decidedHits += 1 }
                        if short != plain { mismatches.append("\(value) json:\(isJSON) free:\(freeText) \(short) vs \(plain)") }
                    } else if plain & ~(ResidualScanner.bit(.phone) | ResidualScanner.bit(.birthDate)) != 0 {
                        leftWithPhrases += 1
                    }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) values: \(mismatches.prefix(5))")
        // Both routes are exercised: many values decided, many with a roster phone or birth date,
        // and values whose phrases only the plain route finds.
        #expect(decided > 3_000)
        #expect(decidedHits > 500)
        #expect(leftWithPhrases > 200)
    }

    /// The words ``DigitWordPhrases/wordShapes(_:)`` finds are the tokenizer's: when it answers,
    /// every word the tokenizer finds starts with a digit, and their shapes are the same.
    @Test func theWordShapesAreTheTokenizers() {
        var g = SeededRandom(seed: 9)
        let alphabet = Array("0123456789aZtT-:.+ /'\\,é\u{00A0}\"_@".unicodeScalars)
        var answered = 0
        for _ in 0..<40_000 {
            var text = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...24, using: &g) { text.append(alphabet[Int.random(in: 0..<alphabet.count, using: &g)]) }
            let string = String(text)
            let shapes = Array(string.utf8).withUnsafeBufferPointer { DigitWordPhrases.wordShapes($0) }
            let tokens = TextTokenizer.tokens(string)
            let allDigitLed = tokens.allSatisfy { $0.key.first?.isASCII == true && $0.key.first?.isNumber == true }
            guard let shapes else { continue }
            answered += 1
            #expect(allDigitLed, "\(string)")
            let expected = tokens.reduce(UInt128(0)) { $0 | DigitWordPhrases.shape(length: $1.key.utf8.count, hasLetter: $1.letterCount > 0) }
            #expect(shapes == expected, "\(string)")
        }
        #expect(answered > 5_000)
    }

    /// The roster with digit-led identifiers has digit-led phrases (the shortcut is tested where
    /// it must step aside), and the plain roster's MRN digits make one too.
    @Test func digitLedIdentifiersMakeDigitLedPhrases() {
        let plain = ResidualScanner(roster: PlantedRoster.participants, threads: 1)
        let digits = ResidualScanner(roster: PlantedRoster.participants + Self.digitRoster, threads: 1)
        #expect(!plain.digitWordPhrases.phraseShapes.isEmpty)
        #expect(digits.digitWordPhrases.phraseShapes.count > plain.digitWordPhrases.phraseShapes.count)
        let shapes = Array("2025-12-13T18:30:00Z".utf8).withUnsafeBufferPointer { DigitWordPhrases.wordShapes($0) } ?? 0
        #expect(!plain.digitWordPhrases.mayMatch(shapes))
        #expect(digits.digitWordPhrases.mayMatch(shapes))
    }
}
