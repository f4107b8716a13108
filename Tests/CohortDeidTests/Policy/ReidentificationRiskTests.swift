import Testing

@testable import CohortDeid

struct ReidentificationRiskTests {
    /// Six records in classes of 3, 2 and 1; every figure below is worked out by hand.
    static func risk() -> ReidentificationRisk {
        ReidentificationRisk(
            quasiIdentifiers: ["sex", "zip3"],
            rows: [["female", "100"], ["female", "100"], ["female", "100"], ["male", ""], ["male", ""], ["other", "9**"]],
            keys: ["p1", "p2", "p3", "p4", "p5", "p6"],
            sensitive: [
                ("medications.text", ["p1": ["naproxen"], "p2": ["ibuprofen"], "p3": ["naproxen"], "p4": ["adalimumab"], "p6": ["a", "b", "c"]]),
                ("consents.sharing", ["p1": ["broad"], "p2": ["broad"], "p3": ["broad"], "p4": ["broad"], "p5": ["broad"], "p6": ["broad"]]),
            ])
    }

    @Test func measuresMatchTheirDefinitions() {
        let risk = Self.risk()
        #expect(risk.records == 6 && risk.classes == 3 && risk.k == 1)
        #expect(risk.prosecutorRiskMax == 1)
        #expect(risk.prosecutorRiskAverage == 0.5)  // (3·1/3 + 2·1/2 + 1·1) / 6
        #expect(risk.uniqueRecords == 1 && risk.sampleUniqueness == 1.0 / 6)
        #expect(risk.equivalenceClasses.map(\.size) == [1, 2, 3])
        #expect(risk.equivalenceClasses.map(\.values) == [["other", "9**"], ["male", ""], ["female", "100"]])
    }

    @Test func lDiversityCountsDistinctValuesPerClassWithMissingAsEmpty() {
        let risk = Self.risk()
        // female: {naproxen, ibuprofen} = 2; male: {adalimumab, ""} = 2 (p5 has no row); other: 3.
        #expect(risk.lDiversity == [
            .init(field: "medications.text", l: 2, homogeneousClasses: 0),
            .init(field: "consents.sharing", l: 1, homogeneousClasses: 3),
        ])
        #expect(risk.equivalenceClasses.map { $0.diversity["medications.text"] } == [3, 2, 2])
    }

    @Test func anEmptyTableHasNoK() {
        let risk = ReidentificationRisk(quasiIdentifiers: ["sex"], rows: [], keys: [], sensitive: [])
        #expect(risk.k == nil && risk.classes == 0 && risk.prosecutorRiskMax == 0 && risk.sampleUniqueness == 0)
    }
}
