import Testing

@testable import CohortCore

/// `Suggest.closest` skips candidates whose length alone rules them out; the result must be the
/// one a full comparison with every candidate gives.
struct SuggestTests {
    static func reference(_ word: String, _ candidates: [String]) -> String? {
        var best: (String, Int)?
        for candidate in candidates {
            let d = Suggest.distance(word.lowercased(), candidate.lowercased())
            if d < (best?.1 ?? Int.max) { best = (candidate, d) }
        }
        guard let (candidate, d) = best, d <= max(2, word.count / 3) else { return nil }
        return candidate
    }

    @Test func pruningByLengthChangesNoAnswer() {
        var random = SeededRandom(seed: 7)
        let kinds = RecordKind.allCases.map(\.rawValue)
        let letters = Array("abcdefghijklmnopqrstuvwxyz_")
        for _ in 0..<2_000 {
            var word = kinds[Int(random.next() % UInt64(kinds.count))]
            // Typos: deletions, insertions, replacements, and sometimes a very different length.
            for _ in 0..<Int(random.next() % 5) {
                let i = word.isEmpty ? 0 : Int(random.next() % UInt64(word.count))
                let index = word.index(word.startIndex, offsetBy: i)
                switch random.next() % 3 {
                case 0: if !word.isEmpty { word.remove(at: index) }
                case 1: word.insert(letters[Int(random.next() % UInt64(letters.count))], at: index)
                default: if !word.isEmpty { word.replaceSubrange(index...index, with: String(letters[Int(random.next() % 26)])) }
                }
            }
            if random.next() % 10 == 0 { word += String(repeating: "x", count: Int(random.next() % 40)) }
            #expect(Suggest.closest(to: word, in: kinds) == Self.reference(word, kinds), "\(word)")
        }
    }

    @Test func aHugeWordHasNoSuggestion() {
        #expect(Suggest.closest(to: String(repeating: "heart_rate", count: 6_554), in: RecordKind.allCases.map(\.rawValue)) == nil)
        #expect(Suggest.closest(to: "heart_rat", in: RecordKind.allCases.map(\.rawValue)) == "heart_rate")
    }
}
