import CohortCore
import Testing

@testable import CohortDeid

/// Issue 27: k over what an acquaintance can know from the records.
struct KAnonymizerRecordAttributesTests {
    static func rows() -> [DeidentifiedParticipant] {
        (0..<6).map { i in
            var row = DeidentifiedParticipant(pseudonym: "P\(i)")
            row.sex = .female
            row.zip3 = "100"
            return row
        }
    }

    /// Kinds recorded: P5 alone wears a scale.
    static let attributes = (names: ["kinds"], values: (0..<6).map { $0 == 5 ? ["body_mass;steps"] : ["steps"] })

    @Test func statedOnlyByDefault() throws {
        let anonymizer = try KAnonymizer(k: 3, quasiIdentifiers: [.sex, .zip3])
        let result = anonymizer.apply(Self.rows(), recordAttributes: Self.attributes)
        #expect(result.participants.count == 6 && result.summary.achievedK == 6)
        #expect(result.summary.recordQuasiIdentifiers == ["kinds"])
        #expect(result.summary.recordAchievedK == 1 && result.summary.recordAttributesEnforced == false)
    }

    @Test func enforcedReachesKOverThemToo() throws {
        let anonymizer = try KAnonymizer(k: 3, quasiIdentifiers: [.sex, .zip3])
        let result = anonymizer.apply(Self.rows(), recordAttributes: Self.attributes, enforceRecordAttributes: true)
        // The published columns cannot split P5 (alone with a scale) from the others: left out.
        #expect(result.suppressedPseudonyms == ["P5"])
        #expect((result.summary.recordAchievedK ?? 0) >= 3 && (result.summary.achievedK ?? 0) >= 3)
        #expect(result.summary.recordAttributesEnforced == true)
        // Without record attributes nothing is left out.
        #expect(anonymizer.apply(Self.rows()).suppressedPseudonyms.isEmpty)
    }
}
