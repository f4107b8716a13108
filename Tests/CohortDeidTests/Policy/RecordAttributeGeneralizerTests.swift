import CohortCore
import Testing

@testable import CohortDeid

/// Issue 27: the records are generalized (kinds left out, sources left out) before anyone is
/// left out for k over what an acquaintance knows.
struct RecordAttributeGeneralizerTests {
    /// A profile with `days` days (from day 20000) of each kind, from `source`.
    static func profile(_ kinds: [String], days: Int = 10, source: String? = "smartwatch", sourceOf: [String: String] = [:]) -> AcquaintanceProfile {
        var p = AcquaintanceProfile()
        for kind in kinds {
            for d in 0..<days {
                p.add(kind: kind, startMs: Int64(20_000 + d) * 86_400_000 + 3_600_000, offsetSeconds: 0, source: sourceOf[kind] ?? source)
            }
        }
        return p
    }

    /// k recomputed over the texts, the way the k-anonymity pass counts them.
    static func k(_ values: [[String]]) -> Int { Dictionary(values.map { ($0, 1) }, uniquingKeysWith: +).values.min() ?? 0 }

    @Test func aRareKindIsLeftOutOfTheParticipantsThatRecordIt() {
        // Five record steps and sleep; one also logs water: k = 3 needs only that kind gone.
        let profiles = (0..<5).map { _ in Self.profile(["steps", "sleep_duration"]) } + [Self.profile(["steps", "sleep_duration", "water_intake"])]
        let g = RecordAttributeGeneralizer.generalize(profiles, k: 3, weekdayKept: false)
        #expect(g.leftOutKinds[5] == ["water_intake"] && g.leftOutKinds[0..<5].allSatisfy(\.isEmpty))
        #expect(g.sourcesPublished && g.stillSmall == 0 && Self.k(g.values) == 6)
        #expect(g.kindsLeftOut == 1)
    }

    @Test func smallClassesFormAClassOnASharedSubset() {
        // Three participants, each with one extra kind of their own: none is in a class of 3
        // until each leaves their own kind out.
        let profiles = ["water_intake", "caffeine_intake", "body_mass"].map { Self.profile(["steps", $0]) } + [Self.profile(["heart_rate"])]
        let g = RecordAttributeGeneralizer.generalize(profiles, k: 3, weekdayKept: false)
        #expect(g.leftOutKinds[0..<3].allSatisfy { $0.count == 1 } && g.leftOutKinds[3].isEmpty)
        #expect(g.values[0] == g.values[1] && g.values[1] == g.values[2])
        #expect(g.stillSmall == 1, "the heart-rate-only participant shares no kind: the k-anonymity pass decides")
    }

    @Test func sourcesGoOnlyWhenThatLeavesFewerInSmallClasses() {
        // Same kinds, four device classes: kinds cannot help; sources left out make one class.
        let profiles = ["smartwatch", "fitness-band", "phone", "ring"].map { Self.profile(["steps"], source: $0) }
        let g = RecordAttributeGeneralizer.generalize(profiles, k: 2, weekdayKept: false)
        #expect(!g.sourcesPublished && g.stillSmall == 0 && g.kindsLeftOut == 0)
        #expect(g.values.allSatisfy { $0[0].isEmpty })
        // When classes are already k, sources stay.
        let kept = RecordAttributeGeneralizer.generalize(profiles + profiles, k: 2, weekdayKept: false)
        #expect(kept.sourcesPublished && kept.stillSmall == 0)
    }

    @Test func leavingAKindOutCarriesItsDeviceClassAndDaysWithIt() {
        // The scale's kind is the only one from a scale: leaving it out also removes that class.
        let scale = Self.profile(["steps", "body_mass"], sourceOf: ["body_mass": "smart-scale"])
        let profiles = [scale] + (0..<3).map { _ in Self.profile(["steps"]) }
        let g = RecordAttributeGeneralizer.generalize(profiles, k: 2, weekdayKept: false)
        #expect(g.leftOutKinds[0] == ["body_mass"] && g.values[0] == g.values[1] && g.values[0][0] == "smartwatch")
        // Active days count too: a participant active 100 days (the 90+ band) has nothing to leave
        // out that would put them in the 10-day participants' class.
        let long = Self.profile(["steps"], days: 100)
        let h = RecordAttributeGeneralizer.generalize([long] + (0..<3).map { _ in Self.profile(["steps"]) }, k: 2, weekdayKept: false)
        #expect(h.leftOutKinds[0].isEmpty && h.stillSmall == 1)
    }

    /// Four participants, k = 3, two with nothing published (the embargo): the two with records
    /// share no class of three, so their records are left out and all four stay published.
    @Test func recordsGoBeforeParticipantsDo() {
        let profiles = [AcquaintanceProfile(), AcquaintanceProfile(), Self.profile(["steps", "pain"]), Self.profile(["heart_rate"], days: 3)]
        let g = RecordAttributeGeneralizer.generalize(profiles, k: 3, weekdayKept: false)
        #expect(g.stillSmall == 0 && Self.k(g.values) == 4)
        #expect(g.leftOutKinds == [[], [], ["steps", "pain"], ["heart_rate"]])
    }

    @Test func theSameInputGivesTheSameDecision() {
        let profiles = (0..<12).map { i in Self.profile(["steps"] + (i % 3 == 0 ? ["water_intake"] : []) + (i % 4 == 0 ? ["body_mass"] : [])) }
        let a = RecordAttributeGeneralizer.generalize(profiles, k: 3, weekdayKept: true)
        #expect(a == RecordAttributeGeneralizer.generalize(profiles, k: 3, weekdayKept: true))
        #expect(a.stillSmall == 0 && Self.k(a.values) >= 3)
    }
}

/// The profiles' day bitmap counts what a set of the same days counts, whatever order and
/// range the days come in (negative days, days far apart, repeats, unions of two).
struct DaySetTests {
    @Test(arguments: [1, 2, 3, 4, 5])
    func countsWhatASetCounts(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        var a = DaySet(), b = DaySet()
        var setA: Set<Int> = [], setB: Set<Int> = []
        for _ in 0..<500 {
            let day = Int.random(in: -400...21_000, using: &generator) / (Bool.random(using: &generator) ? 1 : 50)
            if Bool.random(using: &generator) { a.insert(day); setA.insert(day) } else { b.insert(day); setB.insert(day) }
        }
        #expect(a.count == setA.count && b.count == setB.count)
        a.formUnion(b)
        #expect(a.count == setA.union(setB).count)
    }
}

/// SplitMix64: a reproducible generator for the cases above (and AcquaintanceProfileTests).
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
