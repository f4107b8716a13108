import CohortCore
import Foundation
import Testing

@testable import CohortDeid

struct KAnonymizerTests {
    static let columns = ["participant.birth_date", "participant.sex", "participant.zip"]

    static func rows(count: Int, seed: UInt64) -> [DeidentifiedParticipant] {
        var g = SeededRandom(seed: seed)
        return (0..<count).map { i in
            var row = DeidentifiedParticipant(pseudonym: "P\(i)")
            row.birthYear = Int.random(in: 1940...2000, using: &g)
            row.sex = [Sex.female, .male, .other].randomElement(using: &g)
            row.zip3 = ["100", "606", "627", "941", "021", "000"].randomElement(using: &g)
            row.ageBand = "30–<45"
            return row
        }
    }

    /// The smallest class size, counted independently (pairwise comparison of the columns).
    static func bruteForceK(_ rows: [DeidentifiedParticipant]) -> Int? {
        rows.map { row in
            rows.filter { $0.birthYear == row.birthYear && $0.sex == row.sex && $0.zip3 == row.zip3 }.count
        }.min()
    }

    @Test(arguments: [(2, 50 as UInt64), (5, 51), (10, 52), (3, 53)])
    func achievesRequestedK(k: Int, seed: UInt64) throws {
        let input = Self.rows(count: 400, seed: seed)
        let anonymizer = try KAnonymizer(k: k, quasiIdentifiers: Self.columns)
        let result = anonymizer.apply(input)
        let achieved = try #require(Self.bruteForceK(result.participants))
        #expect(achieved >= k)
        #expect(result.summary.achievedK == achieved)
        #expect(result.summary.requestedK == k)
        #expect(result.participants.count + result.suppressedPseudonyms.count == input.count)
        #expect(result.summary.suppressedParticipants == result.suppressedPseudonyms.count)
        // Values are only ever removed, never invented, and rows keep their order.
        let original = Dictionary(uniqueKeysWithValues: input.map { ($0.pseudonym, $0) })
        for row in result.participants {
            let before = try #require(original[row.pseudonym])
            #expect(row.birthYear == nil || row.birthYear == before.birthYear)
            #expect(row.zip3 == nil || row.zip3 == before.zip3)
            #expect(row.sex == nil || row.sex == before.sex)
            #expect(row.ageBand == before.ageBand)  // not declared: untouched
        }
        let suppressed = result.summary.suppressedValues.values.reduce(0, +)
        #expect(suppressed > 0)
    }

    @Test func deterministic() throws {
        let input = Self.rows(count: 300, seed: 60)
        let anonymizer = try KAnonymizer(k: 5, quasiIdentifiers: Self.columns)
        #expect(anonymizer.apply(input) == anonymizer.apply(input))
    }

    @Test func alreadyAnonymousTableIsUntouched() throws {
        let row = { (name: String) -> DeidentifiedParticipant in
            var r = DeidentifiedParticipant(pseudonym: name)
            r.birthYear = 1980
            r.sex = .female
            r.zip3 = "100"
            return r
        }
        let input = ["A", "B", "C"].map(row)
        let result = try KAnonymizer(k: 3, quasiIdentifiers: Self.columns).apply(input)
        #expect(result.participants == input)
        #expect(result.summary.achievedK == 3 && result.summary.classes == 1 && result.summary.suppressedValues.isEmpty)
    }

    @Test func tooFewParticipantsAreSuppressedEntirely() throws {
        let input = Self.rows(count: 3, seed: 61)
        let result = try KAnonymizer(k: 5, quasiIdentifiers: Self.columns).apply(input)
        #expect(result.participants.isEmpty)
        #expect(result.suppressedPseudonyms == ["P0", "P1", "P2"])
        #expect(result.summary.achievedK == nil)
    }

    @Test func unsupportedQuasiIdentifierIsRefused() {
        #expect(throws: CohortError.self) { try KAnonymizer(k: 5, quasiIdentifiers: ["participant.name"]) }
        #expect(throws: CohortError.self) { try KAnonymizer(k: 0, quasiIdentifiers: Self.columns) }
    }
}
