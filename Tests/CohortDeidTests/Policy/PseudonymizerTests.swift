import CohortCore
import Foundation
import Testing

@testable import CohortDeid

struct PseudonymizerTests {
    @Test func knownAnswer() throws {
        // Python: base64.b32encode(hmac.new(bytes(range(32)), b"pseudonym" + uuid, sha256).digest())[:16]
        let id = try #require(UUID(uuidString: "123E4567-E89B-12D3-A456-426614174000"))
        #expect(Pseudonymizer(recipientKey: Fixtures.key).pseudonym(for: id) == "24JZTCFUFNE77HQB")
    }

    @Test func uniqueAcrossTenThousandParticipants() {
        var g = SeededRandom(seed: 7)
        let pseudonymizer = Pseudonymizer(recipientKey: Fixtures.key)
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var seen: Set<String> = []
        for _ in 0..<10_000 {
            let pseudonym = pseudonymizer.pseudonym(for: Fixtures.uuid(&g))
            #expect(pseudonym.count >= 16)
            #expect(pseudonym.allSatisfy(alphabet.contains))
            seen.insert(pseudonym)
        }
        #expect(seen.count == 10_000)
    }

    @Test func stableForOneRecipientDifferentAcrossRecipients() {
        var g = SeededRandom(seed: 8)
        let a = Pseudonymizer(recipientKey: Fixtures.key)
        let again = Pseudonymizer(recipientKey: Fixtures.key)
        let b = Pseudonymizer(recipientKey: Fixtures.otherKey)
        for _ in 0..<500 {
            let id = Fixtures.uuid(&g)
            #expect(a.pseudonym(for: id) == again.pseudonym(for: id))
            #expect(a.pseudonym(for: id) != b.pseudonym(for: id))
        }
    }

    @Test func independentOfIdentity() {
        // Two participants with the same name, code and MRN still get unrelated pseudonyms.
        var roster = Fixtures.roster(count: 2)
        roster[1].identity = roster[0].identity
        roster[1].code = roster[0].code
        let p = Pseudonymizer(recipientKey: Fixtures.key)
        #expect(p.pseudonym(for: roster[0].id) != p.pseudonym(for: roster[1].id))
    }
}
