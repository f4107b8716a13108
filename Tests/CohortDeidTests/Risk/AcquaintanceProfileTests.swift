import CohortCore
import Testing

@testable import CohortDeid

/// The profile's compact storage (kinds in an array, device classes as bits, days as an inline
/// bitmap) says what a plain model of sets says: the same texts for every kind filter, with and
/// without sources and weekdays, over random records — kinds in any order, days far apart and
/// before 1970, more than 64 device classes, sources missing or empty.
struct AcquaintanceProfileTests {
    /// The plain model: per kind, a set of local days, a set of sources and the earliest start.
    struct Model {
        var days: [String: Set<Int>] = [:]
        var sources: [String: Set<String>] = [:]
        var first: [String: (Int64, Int32)] = [:]

        mutating func add(kind: String, startMs: Int64, offsetSeconds: Int32, source: String?) {
            days[kind, default: []].insert(TimeAttacks.localDay(startMs, offsetSeconds))
            if let source, !source.isEmpty { sources[kind, default: []].insert(source) } else { sources[kind, default: []].formUnion([]) }
            if let f = first[kind], !((startMs, offsetSeconds) < f) { return }
            first[kind] = (startMs, offsetSeconds)
        }

        func values(weekdayKept: Bool, kinds: Set<String>?, sources withSources: Bool) -> [String] {
            let kept = days.keys.filter { kinds?.contains($0) ?? true }
            var result: [String] = []
            if weekdayKept {
                let earliest = kept.compactMap { first[$0] }.min { $0 < $1 }
                let date = earliest.map { CivilDate(daysSinceEpoch: TimeAttacks.localDay($0.0, $0.1)) }
                result += [date.map { String($0.isoWeekday) } ?? "", date.map { String($0.month) } ?? ""]
            }
            let classes = withSources ? kept.reduce(into: Set<String>()) { $0.formUnion(sources[$1] ?? []) } : []
            let active = kept.reduce(into: Set<Int>()) { $0.formUnion(days[$1] ?? []) }.count
            return result + [
                classes.sorted().joined(separator: ";"), kept.sorted().joined(separator: ";"),
                String(active / AcquaintanceProfile.activeDaysBand * AcquaintanceProfile.activeDaysBand) + "+",
            ]
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func theCompactProfileSaysWhatSetsSay(seed: UInt64) {
        var g = SeededGenerator(seed: seed)
        let kinds = (0..<12).map { "kind_\($0)" }
        let sources = (0..<(seed.isMultiple(of: 2) ? 70 : 3)).map { "class \($0)" } + ["", "class 0"]
        var profile = AcquaintanceProfile()
        var model = Model()
        let spread: Int64 = seed.isMultiple(of: 3) ? 2_000 : 120  // days: some profiles span years
        for _ in 0..<Int.random(in: 1...600, using: &g) {
            let kind = kinds[Int.random(in: 0..<kinds.count, using: &g)]
            let startMs = (Int64.random(in: -spread...spread, using: &g) + 20_000) * 86_400_000 + Int64.random(in: 0..<86_400_000, using: &g)
            let offset = [Int32(-18_000), 0, 3_600, 36_000, 50_400][Int.random(in: 0..<5, using: &g)]
            let source: String? = Int.random(in: 0..<10, using: &g) == 0 ? nil : sources[Int.random(in: 0..<sources.count, using: &g)]
            profile.add(kind: kind, startMs: startMs, offsetSeconds: offset, source: source)
            model.add(kind: kind, startMs: startMs, offsetSeconds: offset, source: source)
        }
        #expect(profile.kinds == Set(model.days.keys))
        for trial in 0..<20 {
            let filter: Set<String>? = trial == 0 ? nil : Set(kinds.filter { _ in Bool.random(using: &g) })
            for weekday in [false, true] {
                for withSources in [false, true] {
                    #expect(
                        profile.values(weekdayKept: weekday, kinds: filter, sources: withSources)
                            == model.values(weekdayKept: weekday, kinds: filter, sources: withSources))
                }
            }
        }
    }
}
