import CohortCore
import Foundation
import Testing

@testable import CohortDeid

/// The flat phrase collection the identifier indexes are built from, against the plain form it
/// replaced: a set of (keys, kind) seen so far and, per first key, the phrases in the order
/// added, sorted longest first.
struct PhraseTableTests {
    /// The plain collection, as `IdentifierIndex.Source` kept it before (the independent route).
    struct PlainPhrases {
        struct Identity: Hashable {
            var keys: [String]
            var kind: IdentifierKind
        }
        var seen: Set<Identity> = []
        var phrases: [String: [IdentifierIndex.Source.Phrase]] = [:]

        mutating func insert(_ keys: [String], _ kind: IdentifierKind, requiresCapital: Bool) {
            guard let first = keys.first, seen.insert(Identity(keys: keys, kind: kind)).inserted else { return }
            phrases[first, default: []].append(.init(keys: keys, kind: kind, requiresCapital: requiresCapital))
        }

        func sorted() -> [String: [IdentifierIndex.Source.Phrase]] {
            phrases.mapValues { list in
                var list = list
                list.sort { $0.keys.count > $1.keys.count }
                return list
            }
        }
    }

    static func describe(_ phrases: [String: [IdentifierIndex.Source.Phrase]]) -> [String: [String]] {
        phrases.mapValues { $0.map { "\($0.keys.joined(separator: " "))|\($0.kind.rawValue)|\($0.requiresCapital)" } }
    }

    /// 40,000 phrases drawn from a small vocabulary (so most repeat, some with another kind or
    /// capital flag, some keys equal only as strings: a composed and a decomposed "é"): the table
    /// keeps exactly the phrases the plain set keeps, with the first flag, in the same order.
    @Test(arguments: [1 as UInt64, 2, 3])
    func keepsEachPhraseOncePerKindInTheOrderAdded(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let vocabulary = ["ann", "lee", "jo", "mrn", "55443322", "march", "14", "1980", "caf\u{E9}", "cafe\u{301}", "p", "0001", "field"]
        var table = IdentifierIndex.PhraseTable()
        var plain = PlainPhrases()
        for _ in 0..<40_000 {
            let count = Int.random(in: 1...4, using: &random)
            let keys = (0..<count).map { _ in vocabulary[Int.random(in: 0..<vocabulary.count, using: &random)] }
            let kind = IdentifierKind.allCases[Int.random(in: 0..<3, using: &random)]
            let capital = Bool.random(using: &random)
            table.insert(keys, kind, requiresCapital: capital)
            plain.insert(keys, kind, requiresCapital: capital)
        }
        table.close()
        var source = IdentifierIndex.Source(mode: .scanner)
        source.setTableForTesting(table)
        #expect(table.count == plain.seen.count)
        #expect(table.count < 40_000 && table.count > 1_000, "the draw repeats phrases and still leaves many")
        #expect(Self.describe(source.phrasesByFirstKey()) == Self.describe(plain.sorted()))
    }

    /// A roster added one participant at a time gives the index the whole roster gives.
    @Test func aRosterAddedOneByOneCollectsWhatTheWholeRosterDoes() {
        let roster = (0..<50).map { i in
            Participant(
                id: UUID(), code: "P-\(1000 + i)", sex: .female, timeZone: "Europe/Berlin", enrolledOn: CivilDate(daysSinceEpoch: 20_150),
                identity: ParticipantIdentity(
                    name: ["Ann Lee", "Jo March", "Hope Field", "Li Wei Chen"][i % 4] + " \(["Smith", "Okafor", "Nguyen"][i % 3])",
                    email: "person\(i)@example.org", phone: "+1 617 555 \(String(format: "%04d", i))",
                    birthDate: CivilDate(year: 1970 + i % 20, month: 1 + i % 12, day: 1 + i % 28), address: "\(i) Larkspur Lane, Leeds",
                    zip: "0213\(i % 10)", mrn: "MRN-\(55_440_000 + i)", devices: ["Ann's Watch FX4K29Q\(i % 10)"]))
        }
        for mode in [IdentifierIndex.Mode.scrubber, .scanner] {
            let whole = IdentifierIndex.Source(roster: roster, mode: mode)
            var streamed = RosterIdentifiers(for: mode == .scrubber ? .scrubber : .scanner)
            for participant in roster { streamed.add(participant) }
            #expect(streamed.count == 50)
            #expect(Self.describe(streamed.source.phrasesByFirstKey()) == Self.describe(whole.phrasesByFirstKey()))
            #expect(streamed.source.phoneSuffixes == whole.phoneSuffixes)
            #expect(streamed.source.birthDays == whole.birthDays)
        }
    }
}
