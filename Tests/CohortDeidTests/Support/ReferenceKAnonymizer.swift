import CohortCore

@testable import CohortDeid

/// The k-anonymizer as it was before its table became interned codes, kept verbatim (a table of
/// `[[String?]]`, a copy per candidate step, classes keyed by the row arrays): the reference the
/// compact ``KAnonymizer`` must agree with row for row.
struct ReferenceKAnonymizer {
    let k: Int
    let quasiIdentifiers: [QuasiIdentifier]
    let sensitive: [SensitiveField]
    let suppressionLimit: Double

    /// The same settings as `anonymizer`.
    init(_ anonymizer: KAnonymizer) {
        k = anonymizer.k
        quasiIdentifiers = anonymizer.quasiIdentifiers
        sensitive = anonymizer.sensitive
        suppressionLimit = anonymizer.suppressionLimit
    }

    /// `rows` made k-anonymous, with what was done.
    func apply(_ rows: [DeidentifiedParticipant]) -> KAnonymization {
        let ageEdges = AgeBandEdges(labels: rows.compactMap(\.ageBand))
        var levels = [QuasiIdentifier: Int]()
        // Published text per row and column, at the current levels.
        var table: [[String?]] = rows.map { row in quasiIdentifiers.map { $0.value(row, level: 0, ageEdges: ageEdges) } }
        func column(_ qi: QuasiIdentifier, at level: Int) -> [String?] {
            rows.map { qi.value($0, level: level, ageEdges: ageEdges) }
        }
        func classSizes(_ table: [[String?]]) -> (small: Int, classes: Int) {
            var sizes: [[String?]: Int] = [:]
            for key in table { sizes[key, default: 0] += 1 }
            return (sizes.values.filter { $0 < k }.reduce(0, +), sizes.count)
        }
        let budget = Int((Double(rows.count) * suppressionLimit).rounded(.down))

        // 1. Generalization, one whole-column step at a time.
        var current = classSizes(table)
        while current.small > budget {
            var best: (qi: QuasiIdentifier, values: [String?], small: Int, classes: Int)?
            // Writing every time in UTC costs analysts the local time of day: `utc_offset` is
            // generalized only once no other column can be.
            let othersLeft = quasiIdentifiers.contains { $0 != .utcOffset && levels[$0, default: 0] < $0.maxLevel }
            for (index, qi) in quasiIdentifiers.enumerated() {
                let level = levels[qi, default: 0]
                guard level < qi.maxLevel, qi != .utcOffset || !othersLeft else { continue }
                let values = column(qi, at: level + 1)
                var candidate = table
                for row in candidate.indices { candidate[row][index] = values[row] }
                let after = classSizes(candidate)
                if let chosen = best {
                    // gain / merged, compared by cross-multiplication; then fewer merged classes.
                    let gain = current.small - after.small, merged = current.classes - after.classes
                    let bestGain = current.small - chosen.small, bestMerged = current.classes - chosen.classes
                    let better =
                        gain * max(bestMerged, 1) > bestGain * max(merged, 1)
                        || (gain * max(bestMerged, 1) == bestGain * max(merged, 1) && merged < bestMerged)
                    if !better { continue }
                }
                best = (qi, values, after.small, after.classes)
            }
            guard let step = best, let index = quasiIdentifiers.firstIndex(of: step.qi) else { break }
            levels[step.qi, default: 0] += 1
            for row in table.indices { table[row][index] = step.values[row] }
            current = (step.small, step.classes)
        }

        // 1b. Undo steps a later step made unnecessary (greedy steps overshoot: once a column is
        // blanked, an earlier one may go back down a level and k still holds). `utc_offset` first,
        // so local times come back whenever they can, then the other columns in reverse order.
        if current.small <= budget {
            let order = quasiIdentifiers.filter { $0 == .utcOffset } + quasiIdentifiers.filter { $0 != .utcOffset }.reversed()
            var lowered = true
            while lowered {
                lowered = false
                for qi in order {
                    guard let index = quasiIdentifiers.firstIndex(of: qi), let level = levels[qi], level > 0 else { continue }
                    let values = column(qi, at: level - 1)
                    var candidate = table
                    for row in candidate.indices { candidate[row][index] = values[row] }
                    let after = classSizes(candidate)
                    guard after.small <= budget else { continue }
                    levels[qi] = level - 1
                    table = candidate
                    current = after
                    lowered = true
                }
            }
        }

        // 2. Cell suppression in small classes, 3. row suppression.
        var alive = [Bool](repeating: true, count: rows.count)
        var emptied = [Set<Int>](repeating: [], count: rows.count)
        while true {
            var classes: [[String?]: [Int]] = [:]
            for i in rows.indices where alive[i] { classes[table[i], default: []].append(i) }
            let small = classes.values.filter { $0.count < k }.flatMap { $0 }.sorted()
            if small.isEmpty { break }
            var best: Int?
            var bestDistinct = 0
            for (index, qi) in quasiIdentifiers.enumerated() where qi.cellSuppressible {
                let distinct = Set(small.compactMap { table[$0][index] }).count
                if distinct > bestDistinct {
                    best = index
                    bestDistinct = distinct
                }
            }
            guard let index = best else {
                for i in small { alive[i] = false }
                continue
            }
            for i in small where table[i][index] != nil {
                table[i][index] = nil
                emptied[i].insert(index)
            }
        }

        var kept: [DeidentifiedParticipant] = []
        var removed: Set<String> = []
        var sizes: [[String?]: Int] = [:]
        var suppressedValues: [QuasiIdentifier: Int] = [:]
        for (i, original) in rows.enumerated() {
            guard alive[i] else {
                removed.insert(original.pseudonym)
                continue
            }
            var row = original
            for (index, qi) in quasiIdentifiers.enumerated() { qi.store(table[i][index], level: levels[qi, default: 0], into: &row) }
            kept.append(row)
            sizes[table[i], default: 0] += 1
            for index in emptied[i] { suppressedValues[quasiIdentifiers[index], default: 0] += 1 }
        }
        var generalized: [String: String] = [:]
        for (qi, level) in levels where level > 0 { generalized[qi.rawValue] = qi.levelName(level) }
        let summary = KAnonymitySummary(
            requestedK: k, achievedK: sizes.values.min(), quasiIdentifiers: quasiIdentifiers.map(\.rawValue), classes: sizes.count,
            suppressedValues: Dictionary(uniqueKeysWithValues: suppressedValues.map { ($0.key.rawValue, $0.value) }),
            suppressedParticipants: removed.count, generalized: generalized, suppressionLimit: suppressionLimit,
            sensitive: sensitive.isEmpty ? nil : sensitive)
        return KAnonymization(participants: kept, suppressedPseudonyms: removed, summary: summary)
    }
}
