/// What ``RecordAttributeGeneralizer/generalize(_:k:weekdayKept:)`` decided.
package struct RecordAttributeGeneralization: Sendable, Equatable {
    /// Per row (participant), the kinds whose records the export leaves out; empty for most.
    package var leftOutKinds: [Set<String>]
    /// Whether records keep their (protocol-mapped) source; false: every record is published
    /// without one, so no device class can be told apart.
    package var sourcesPublished: Bool
    /// Per row, the ``AcquaintanceProfile`` texts of what is left.
    public var values: [[String]]
    /// Rows still in a class smaller than k over the record attributes alone (the k-anonymity
    /// pass generalizes participant columns around them, or leaves them out).
    package var stillSmall: Int

    /// Participant–kind pairs left out.
    package var kindsLeftOut: Int { leftOutKinds.reduce(0) { $0 + $1.count } }
}

/// Reaches k over what an acquaintance knows from the records (``AcquaintanceProfile``) by
/// generalizing the records, so that k-anonymity over the participant columns plus these
/// attributes leaves (almost) nobody out.
///
/// The only ways to make two participants' record attributes equal are to publish less of the
/// records: leave out a participant's records of some kinds (their kinds set becomes a subset;
/// their device classes and active days follow from what is left), or publish every record
/// without its source. Procedure, deterministic for a given input:
///
/// 1. **Join a class.** Each row in a class smaller than k (smallest classes first) moves to the
///    class of another row it can become by leaving out kinds: the one that keeps the most kinds,
///    preferring classes that reach k with it, then the larger. Repeat until nothing moves.
/// 2. **Form a class.** Rows still in small classes that share a kinds subset and, trimmed to it,
///    the same attributes, form a class of their own when they are at least k (largest subset
///    first). Then back to 1.
/// 3. **Device class.** If rows are left in small classes, the same is tried with every source
///    left out; that is taken only when it leaves fewer rows in small classes.
///
/// Leaving out every kind of a row (all of the participant's records; their row and consents
/// stay) is what a row comes to only when no class that keeps a kind reaches k: it loses less
/// than suppressing the participant, which the k-anonymity pass does last for rows still small.
package enum RecordAttributeGeneralizer {
    package static func generalize(_ profiles: [AcquaintanceProfile], k: Int, weekdayKept: Bool) -> RecordAttributeGeneralization {
        let kept = trimmed(profiles, k: k, weekdayKept: weekdayKept, sources: true)
        guard kept.stillSmall > 0 else { return kept }
        let withoutSources = trimmed(profiles, k: k, weekdayKept: weekdayKept, sources: false)
        return withoutSources.stillSmall < kept.stillSmall ? withoutSources : kept
    }

    static func trimmed(_ profiles: [AcquaintanceProfile], k: Int, weekdayKept: Bool, sources: Bool) -> RecordAttributeGeneralization {
        var trimming = KindTrimming(profiles, k: k, weekdayKept: weekdayKept, sources: sources)
        repeat {
            trimming.joinExistingClasses()
        } while trimming.formSharedClass()
        return RecordAttributeGeneralization(
            leftOutKinds: profiles.indices.map { profiles[$0].kinds.subtracting(trimming.chosen[$0]) }, sourcesPublished: sources,
            values: trimming.values, stillSmall: trimming.smallRows().count)
    }
}

/// One run of ``RecordAttributeGeneralizer/trimmed(_:k:weekdayKept:sources:)``: for each row the
/// kinds it keeps and its attribute values, and the size of each class.
private struct KindTrimming {
    let profiles: [AcquaintanceProfile]
    let k: Int
    let weekdayKept: Bool
    let sources: Bool
    let kindsColumn: Int
    private(set) var chosen: [Set<String>]
    private(set) var values: [[String]]
    private var sizes: [[String]: Int] = [:]

    init(_ profiles: [AcquaintanceProfile], k: Int, weekdayKept: Bool, sources: Bool) {
        self.profiles = profiles
        self.k = k
        self.weekdayKept = weekdayKept
        self.sources = sources
        kindsColumn = AcquaintanceProfile.attributes(weekdayKept: weekdayKept).firstIndex(of: "kinds") ?? 0
        chosen = profiles.map(\.kinds)
        values = profiles.map { $0.values(weekdayKept: weekdayKept, sources: sources) }
        for v in values { sizes[v, default: 0] += 1 }
    }

    func kinds(of tuple: [String]) -> Set<String> {
        let text = tuple[kindsColumn]
        return text.isEmpty ? [] : Set(text.split(separator: ";").map(String.init))
    }

    /// Rows in classes smaller than k, smallest class first (then row order).
    func smallRows() -> [Int] {
        values.indices.filter { sizes[values[$0], default: 0] < k }.sorted {
            (sizes[values[$0], default: 0], $0) < (sizes[values[$1], default: 0], $1)
        }
    }

    mutating func move(_ i: Int, to tuple: [String], kinds: Set<String>) {
        sizes[values[i], default: 0] -= 1
        if sizes[values[i]] == 0 { sizes[values[i]] = nil }
        sizes[tuple, default: 0] += 1
        values[i] = tuple
        chosen[i] = kinds
    }

    /// 1. Rows in small classes join an existing class on a subset of their kinds, until none can.
    mutating func joinExistingClasses() {
        var moved = true
        while moved {
            moved = false
            let classes = sizes.keys.sorted { $0.lexicographicallyPrecedes($1) }.map { ($0, kinds(of: $0)) }
            for i in smallRows() where sizes[values[i], default: 0] < k {
                // Joining a class that stays small helps only when it is larger than the row's own.
                if let b = bestClass(for: i, among: classes), b.size + 1 >= k || b.size >= sizes[values[i], default: 0] {
                    move(i, to: b.tuple, kinds: b.kinds)
                    moved = true
                }
            }
        }
    }

    /// The class row `i` can join on a strict subset of its kinds: preferring one it makes k,
    /// then more kinds kept, then a larger class.
    func bestClass(for i: Int, among classes: [([String], Set<String>)]) -> (tuple: [String], kinds: Set<String>, size: Int)? {
        var best: (tuple: [String], kinds: Set<String>, size: Int)?
        for (tuple, set) in classes where set.isStrictSubset(of: chosen[i]) {
            let size = sizes[tuple, default: 0]
            guard size > 0, profiles[i].values(weekdayKept: weekdayKept, kinds: set, sources: sources) == tuple else { continue }
            if let b = best {
                let key = (size + 1 >= k ? 1 : 0, set.count, size)
                let bestKey = (b.size + 1 >= k ? 1 : 0, b.kinds.count, b.size)
                guard key > bestKey else { continue }
            }
            best = (tuple, set, size)
        }
        return best
    }

    /// 2. Rows left in small classes form a class of their own on a shared subset (the largest
    /// subset, then the most members); returns whether one was formed.
    mutating func formSharedClass() -> Bool {
        let small = smallRows()
        guard !small.isEmpty else { return false }
        var formed: (subset: Set<String>, tuple: [String], members: [Int])?
        var tried: Set<Set<String>> = []
        for i in small {
            for j in small where j != i {
                let subset = chosen[i].intersection(chosen[j])
                guard tried.insert(subset).inserted else { continue }
                let tuple = profiles[i].values(weekdayKept: weekdayKept, kinds: subset, sources: sources)
                let members = small.filter { m in
                    subset.isSubset(of: chosen[m]) && profiles[m].values(weekdayKept: weekdayKept, kinds: subset, sources: sources) == tuple
                }
                guard members.count >= k else { continue }
                if let f = formed, (f.subset.count, f.members.count) >= (subset.count, members.count) { continue }
                formed = (subset, tuple, members)
            }
        }
        guard let f = formed else { return false }
        for m in f.members { move(m, to: f.tuple, kinds: f.subset) }
        return true
    }
}
