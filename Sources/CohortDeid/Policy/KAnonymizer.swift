package import CohortCore

/// Makes the participant table k-anonymous over every column it publishes: generalization
/// first, suppression last.
///
/// The quasi-identifiers are all the columns of `participants.csv` besides the pseudonym (see
/// ``QuasiIdentifier``). Equivalence classes are the rows with equal published text in all of
/// them; an empty cell is a value of its own. The procedure, deterministic for a given input:
///
/// 1. **Generalization** (whole columns). While more rows sit in classes smaller than k than the
///    suppression limit allows (`suppressionLimit` × rows, rounded down), take one step up one
///    column's ladder: the step that takes the most rows out of small classes per class it merges
///    (the information it loses); ties go to the step that merges fewer classes, then to the
///    column order. `utc_offset` (→ every time written in UTC) is a candidate only once every
///    other column is at the top of its ladder. Stop when no step is left. Then undo every step
///    a later one made unnecessary (one level at a time, `utc_offset` first), so k is not
///    overshot.
/// 2. **Cell suppression** (rows in small classes only). Among those rows, empty the column with
///    the most distinct values among them (ties: column order) — never `status` or
///    `utc_offset` — and repeat.
/// 3. **Row suppression**. Rows with nothing left to empty whose class is still smaller than k
///    are removed; ``KAnonymization/suppressedPseudonyms`` names them so their consents and
///    records are left out too.
///
/// Generalized values are written as ranges or periods (`1980–1984`, `2025-Q1`), never as a
/// made-up exact value.
package struct KAnonymizer: Sendable {
    /// The smallest class size to reach.
    public let k: Int
    /// The published columns, in table order.
    public let quasiIdentifiers: [QuasiIdentifier]
    /// The sensitive fields named for l-diversity (carried into the summary).
    public let sensitive: [SensitiveField]
    /// The share of rows that may stay in small classes after generalization, to be fixed by
    /// suppression (default 5%).
    package let suppressionLimit: Double

    /// The default share of rows suppression may handle instead of generalization.
    package static let defaultSuppressionLimit = 0.05

    /// Throws when `k` < 1 or `suppressionLimit` is not in 0...1.
    package init(
        k: Int, quasiIdentifiers: [QuasiIdentifier], sensitive: [SensitiveField] = [],
        suppressionLimit: Double = KAnonymizer.defaultSuppressionLimit
    ) throws {
        guard k >= 1 else {
            throw CohortError(
                .invalidInput, "k-anonymity needs k of at least 1", at: .init(field: "deidentification.k_anonymity.k"),
                hint: "use k = 5 or more for shared data")
        }
        guard (0...1).contains(suppressionLimit) else {
            throw CohortError(.invalidInput, "the suppression limit must be a share between 0 and 1", hint: "use 0.05 (5%)")
        }
        self.k = k
        self.quasiIdentifiers = Array(Set(quasiIdentifiers)).sorted()
        self.sensitive = sensitive
        self.suppressionLimit = suppressionLimit
    }

    /// The anonymizer the policy declares (over every column it publishes), or nil when it
    /// declares no k-anonymity.
    ///
    /// - Throws: `CohortError` when a sensitive field is not published by the policy.
    package init?(policy: DeidentificationPolicy) throws {
        guard let settings = policy.kAnonymity else { return nil }
        var columns = policy.publishedParticipantColumns.compactMap(QuasiIdentifier.init(rawValue:))
        // Extra quasi-identifiers name participant fields; a field the export drops has no column.
        for name in settings.quasiIdentifiers {
            let field = name.hasPrefix("participant.") ? String(name.dropFirst("participant.".count)) : name
            let published = policy.rule(table: "participant", field: field).map { $0.transform != .drop } ?? false
            guard published, let column = QuasiIdentifier.column(forField: field) else { continue }
            columns.append(column)
        }
        var sensitive: [SensitiveField] = []
        for (index, name) in (settings.sensitive ?? []).enumerated() {
            guard let field = SensitiveField(name: name, policy: policy) else {
                throw CohortError(
                    .invalidInput, "the sensitive field is not published by the policy",
                    at: .init(field: "deidentification.k_anonymity.sensitive[\(index)]"),
                    hint: "give the field a rule other than drop under deidentification.fields, or remove it from sensitive")
            }
            sensitive.append(field)
        }
        try self.init(k: settings.k, quasiIdentifiers: columns, sensitive: sensitive)
    }

    /// One bit per quasi-identifier column, for the cells emptied in a row. `quasiIdentifiers`
    /// are distinct cases of ``QuasiIdentifier`` (10 of them), so they fit;
    /// KAnonymizerTests.everyColumnHasABitInTheEmptiedMask fails first should that change.
    typealias EmptiedCells = UInt16

    /// `rows` made k-anonymous, with what was done. `recordAttributes` (names, and one value per
    /// name for each row) is what an acquaintance can know from the records
    /// (``AcquaintanceProfile``): the summary states it and the k over the published columns
    /// plus it (``KAnonymitySummary/recordAchievedK``). With `enforceRecordAttributes` the pass
    /// also reaches k over it: it cannot be generalized or emptied in `participants.csv`, so it
    /// makes the other columns coarser (while that helps) and, last, leaves rows out. `achievedK`
    /// stays the k of `participants.csv` alone.
    ///
    /// `fixedLevels` holds columns at least at the given level (the export's second pass, once
    /// the record attributes were counted in UTC because a first pass generalized `utc_offset`).
    public func apply(
        _ rows: [DeidentifiedParticipant], recordAttributes: (names: [String], values: [[String]])? = nil, enforceRecordAttributes: Bool = false,
        fixedLevels: [QuasiIdentifier: Int] = [:]
    ) -> KAnonymization {
        var run = KAnonymityRun(
            self, rows: rows, recordAttributes: recordAttributes, enforceRecordAttributes: enforceRecordAttributes, fixedLevels: fixedLevels)
        run.generalize()
        run.undoUnneededSteps()
        let emptied = run.suppress()
        return run.published(emptied: emptied, enforceRecordAttributes: enforceRecordAttributes)
    }
}

/// One run of ``KAnonymizer/apply(_:recordAttributes:enforceRecordAttributes:fixedLevels:)``:
/// the rows coded column by column at the current levels (a ``CodeTable``), the levels, and
/// the rows still alive in the order the last count left them (classes as runs). Each step of
/// the procedure is one method, called in order.
private struct KAnonymityRun {
    let anonymizer: KAnonymizer
    let rows: [DeidentifiedParticipant]
    let ageEdges: AgeBandEdges
    let fixedLevels: [QuasiIdentifier: Int]
    /// The record attributes, when they hold one value list per row.
    let stated: (names: [String], values: [[String]])?
    /// How many record-attribute columns follow the published ones in `table` (0 unless enforced).
    let extra: Int
    /// Rows that may stay in small classes after generalization.
    let budget: Int
    var levels: [QuasiIdentifier: Int] = [:]
    var table: CodeTable
    var grouped: [Int32]
    var current: (small: Int, classes: Int) = (0, 0)

    var k: Int { anonymizer.k }
    var quasiIdentifiers: [QuasiIdentifier] { anonymizer.quasiIdentifiers }

    init(
        _ anonymizer: KAnonymizer, rows: [DeidentifiedParticipant], recordAttributes: (names: [String], values: [[String]])?,
        enforceRecordAttributes: Bool, fixedLevels: [QuasiIdentifier: Int]
    ) {
        self.anonymizer = anonymizer
        self.rows = rows
        self.fixedLevels = fixedLevels
        ageEdges = AgeBandEdges(labels: rows.lazy.compactMap(\.ageBand))
        for (qi, level) in fixedLevels where anonymizer.quasiIdentifiers.contains(qi) { levels[qi] = min(max(level, 0), qi.maxLevel) }
        stated = recordAttributes.flatMap { $0.values.count == rows.count ? $0 : nil }
        extra = enforceRecordAttributes ? stated?.names.count ?? 0 : 0
        budget = Int((Double(rows.count) * anonymizer.suppressionLimit).rounded(.down))
        table = CodeTable(rows: rows.count, width: anonymizer.quasiIdentifiers.count + extra)
        grouped = (0..<rows.count).map { Int32($0) }
        for (index, qi) in quasiIdentifiers.enumerated() { table.setColumn(index, to: column(qi, at: levels[qi, default: 0])) }
        for j in 0..<extra {
            table.setColumn(quasiIdentifiers.count + j, to: Self.codes((recordAttributes?.values ?? []).map { j < $0.count ? $0[j] : "" }))
        }
        current = classSizes()
    }

    /// Texts as codes: equal texts share a code (from 1; 0 is an empty cell).
    static func codes(_ texts: [String?]) -> [Int32] {
        var codes: [String: Int32] = [:]
        return texts.map { text in
            guard let text else { return 0 }
            if let code = codes[text] { return code }
            let code = Int32(codes.count + 1)
            codes[text] = code
            return code
        }
    }

    /// A column's published text at `level` as codes. Codes are compared only within one column
    /// at one level (the table holds each column at its current level), so the map lives only
    /// while one column is coded; kept rows get their texts back from `QuasiIdentifier.value`,
    /// byte for byte.
    func column(_ qi: QuasiIdentifier, at level: Int) -> [Int32] {
        Self.codes(rows.map { qi.value($0, level: level, ageEdges: ageEdges) })
    }

    /// Rows in classes smaller than k, and the number of classes (with column `index` replaced
    /// by `values`, when given).
    mutating func classSizes(replacing index: Int? = nil, with values: [Int32] = []) -> (small: Int, classes: Int) {
        var small = 0, classes = 0
        let k = self.k
        table.forEachClass(of: &grouped, replacing: index, with: values) { run in
            classes += 1
            if run.count < k { small += run.count }
        }
        return (small, classes)
    }

    /// 1. Generalization, one whole-column step at a time, while more rows than the budget sit
    /// in small classes. With record attributes a single step often helps nobody while several
    /// together do (the record classes are k already, RecordAttributeGeneralizer): it goes on to
    /// the top, and ``undoUnneededSteps()`` undoes what was not needed.
    mutating func generalize() {
        while current.small > budget {
            guard let step = bestStep(), let index = quasiIdentifiers.firstIndex(of: step.qi) else { break }
            levels[step.qi, default: 0] += 1
            table.setColumn(index, to: step.values)
            current = (step.small, step.classes)
        }
    }

    /// The step up one column's ladder that takes the most rows out of small classes per class
    /// it merges; ties: fewer merged classes, then column order. Writing every time in UTC costs
    /// analysts the local time of day: `utc_offset` is a candidate only once no other column is.
    mutating func bestStep() -> (qi: QuasiIdentifier, values: [Int32], small: Int, classes: Int)? {
        var best: (qi: QuasiIdentifier, values: [Int32], small: Int, classes: Int)?
        let othersLeft = quasiIdentifiers.contains { $0 != .utcOffset && levels[$0, default: 0] < $0.maxLevel }
        for (index, qi) in quasiIdentifiers.enumerated() {
            let level = levels[qi, default: 0]
            guard level < qi.maxLevel, qi != .utcOffset || !othersLeft else { continue }
            let values = column(qi, at: level + 1)
            let after = classSizes(replacing: index, with: values)
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
        return best
    }

    /// Rows the record attributes alone set apart (their class over the attributes is small):
    /// generalization cannot help them, so they do not keep the columns coarse.
    func recordFloor() -> Int {
        guard extra > 0, let stated else { return 0 }
        var sizes: [[String]: Int] = [:]
        for v in stated.values { sizes[v, default: 0] += 1 }
        return stated.values.filter { sizes[$0, default: 0] < k }.count
    }

    /// 1b. Undo steps a later step made unnecessary (greedy steps overshoot: once a column is
    /// blanked, an earlier one may go back down a level and k still holds). `utc_offset` first,
    /// so local times come back whenever they can, then the other columns in reverse order. A
    /// step is undone when it leaves no more rows in small classes than the budget and the
    /// record floor.
    mutating func undoUnneededSteps() {
        let reached = budget + recordFloor()
        guard current.small <= reached else { return }
        let order = quasiIdentifiers.filter { $0 == .utcOffset } + quasiIdentifiers.filter { $0 != .utcOffset }.reversed()
        var lowered = true
        while lowered {
            lowered = false
            for qi in order {
                guard let index = quasiIdentifiers.firstIndex(of: qi), let level = levels[qi], level > fixedLevels[qi, default: 0] else { continue }
                let values = column(qi, at: level - 1)
                let after = classSizes(replacing: index, with: values)
                guard after.small <= reached else { continue }
                levels[qi] = level - 1
                table.setColumn(index, to: values)
                current = after
                lowered = true
            }
        }
    }

    /// 2. Cell suppression in small classes, 3. row suppression. `grouped` keeps the rows still
    /// alive; returns for each row its emptied cells (bit `index` set once the row's cell in
    /// column `index` is emptied).
    mutating func suppress() -> [KAnonymizer.EmptiedCells] {
        precondition(quasiIdentifiers.count <= KAnonymizer.EmptiedCells.bitWidth, "more quasi-identifier columns than a row's mask holds")
        var emptied = [KAnonymizer.EmptiedCells](repeating: 0, count: rows.count)
        let k = self.k
        while true {
            var small: [Int32] = []
            table.forEachClass(of: &grouped) { run in if run.count < k { small.append(contentsOf: run) } }
            if small.isEmpty { break }
            guard let index = columnToEmpty(among: small) else {
                let dead = Set(small)
                grouped.removeAll { dead.contains($0) }
                continue
            }
            for i in small where table[Int(i), index] != 0 {
                table[Int(i), index] = 0
                emptied[Int(i)] |= 1 << index
            }
        }
        return emptied
    }

    /// The suppressible column with the most distinct values among rows `small` (ties: column
    /// order), or nil when none has a value left.
    func columnToEmpty(among small: [Int32]) -> Int? {
        var best: Int?
        var bestDistinct = 0
        for (index, qi) in quasiIdentifiers.enumerated() where qi.cellSuppressible {
            // Interning is one-to-one within a column: distinct codes are distinct texts.
            var codes: Set<Int32> = []
            for i in small where table[Int(i), index] != 0 { codes.insert(table[Int(i), index]) }
            if codes.count > bestDistinct {
                best = index
                bestDistinct = codes.count
            }
        }
        return best
    }

    /// The classes of `participants.csv` alone (its columns without the record attributes):
    /// their number and the smallest one's size.
    mutating func publishedClasses() -> (classes: Int, achievedK: Int?) {
        if extra > 0 {
            var published = CodeTable(rows: rows.count, width: quasiIdentifiers.count)
            for c in 0..<quasiIdentifiers.count { published.setColumn(c, to: (0..<rows.count).map { table[$0, c] }) }
            table = published
        }
        var classes = 0
        var achievedK: Int?
        table.forEachClass(of: &grouped) { run in
            classes += 1
            achievedK = min(achievedK ?? run.count, run.count)
        }
        return (classes, achievedK)
    }

    /// The kept rows with their published texts, the suppressed pseudonyms, and the summary.
    mutating func published(emptied: [KAnonymizer.EmptiedCells], enforceRecordAttributes: Bool) -> KAnonymization {
        var alive = [Bool](repeating: false, count: rows.count)
        for i in grouped { alive[Int(i)] = true }
        let (classes, achievedK) = publishedClasses()
        grouped = []
        var kept: [DeidentifiedParticipant] = []
        kept.reserveCapacity(alive.lazy.filter { $0 }.count)
        var removed: Set<String> = []
        var suppressedValues: [QuasiIdentifier: Int] = [:]
        // Classes over the published texts plus the record attributes, for `recordAchievedK`.
        var recordClasses: [[String]: Int] = [:]
        for (i, original) in rows.enumerated() {
            guard alive[i] else {
                removed.insert(original.pseudonym)
                continue
            }
            var row = original
            var texts: [String] = []
            for (index, qi) in quasiIdentifiers.enumerated() {
                let level = levels[qi, default: 0]
                // A cell not emptied holds the column's text at its level: the text its code was made from.
                let published = table[i, index] == 0 ? nil : qi.value(original, level: level, ageEdges: ageEdges)
                qi.store(published, level: level, into: &row)
                if emptied[i] & (1 << index) != 0 { suppressedValues[qi, default: 0] += 1 }
                if stated != nil { texts.append(published ?? "") }
            }
            if let stated { recordClasses[texts + [""] + stated.values[i], default: 0] += 1 }
            kept.append(row)
        }
        let summary = summary(
            classes: classes, achievedK: achievedK, suppressedValues: suppressedValues, removed: removed.count, recordClasses: recordClasses,
            enforceRecordAttributes: enforceRecordAttributes)
        return KAnonymization(participants: kept, suppressedPseudonyms: removed, summary: summary)
    }

    func summary(
        classes: Int, achievedK: Int?, suppressedValues: [QuasiIdentifier: Int], removed: Int, recordClasses: [[String]: Int],
        enforceRecordAttributes: Bool
    ) -> KAnonymitySummary {
        var generalized: [String: String] = [:]
        for (qi, level) in levels where level > 0 { generalized[qi.rawValue] = qi.levelName(level) }
        var summary = KAnonymitySummary(
            requestedK: k, achievedK: achievedK, quasiIdentifiers: quasiIdentifiers.map(\.rawValue), classes: classes,
            suppressedValues: Dictionary(uniqueKeysWithValues: suppressedValues.map { ($0.key.rawValue, $0.value) }),
            suppressedParticipants: removed, generalized: generalized, suppressionLimit: anonymizer.suppressionLimit,
            sensitive: anonymizer.sensitive.isEmpty ? nil : anonymizer.sensitive)
        if let stated {
            summary.recordQuasiIdentifiers = stated.names
            summary.recordAchievedK = recordClasses.values.min()
            summary.recordAttributesEnforced = enforceRecordAttributes
        }
        return summary
    }
}

extension QuasiIdentifier {
    /// The column a participant policy field publishes (`zip` → `zip3`), nil for fields without one.
    static func column(forField field: String) -> QuasiIdentifier? {
        switch field {
        case "sex": .sex
        case "birth_date": .birthYear
        case "age": .ageBand
        case "zip": .zip3
        case "enrolled_on": .enrolledOn
        case "status": .status
        case "time_zone": .timeZone
        case "devices": .devices
        default: nil
        }
    }
}

/// A sensitive field named for l-diversity, with where the export publishes it.
public struct SensitiveField: Sendable, Hashable, Codable {
    /// The policy name, e.g. `medication_log.text`.
    public var field: String
    /// The CSV table (file name without `.csv`), e.g. `medications`.
    public var table: String
    /// The column in that table (`value_label` for a generalized value).
    public var column: String

    /// A sensitive field as given.
    package init(field: String, table: String, column: String) {
        self.field = field
        self.table = table
        self.column = column
    }

    /// Where `policy` publishes `name` (`consent.<field>` or `<data type>.<field>`), or nil when
    /// it does not publish it.
    package init?(name: String, policy: DeidentificationPolicy) {
        let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2, let rule = policy.rule(table: parts[0], field: parts[1]), rule.transform != .drop else { return nil }
        let table: String
        if parts[0] == "consent" {
            table = "consents"
        } else if let type = DataType(rawValue: parts[0]) {
            table = type.tableName
        } else {
            return nil
        }
        let column = parts[1] == "value" && rule.transform == .generalize ? "value_label" : parts[1]
        self.init(field: name, table: table, column: column)
    }
}

/// The result of ``KAnonymizer/apply(_:)``.
package struct KAnonymization: Sendable, Hashable {
    /// The rows to export, in input order, generalized and with suppressed values set to nil.
    public var participants: [DeidentifiedParticipant]
    /// Participants removed entirely: leave out their consents and records too.
    package var suppressedPseudonyms: Set<String>
    /// What was achieved and done, for the report and the manifest.
    public var summary: KAnonymitySummary
}

/// What k-anonymization achieved, for the report and the manifest.
public struct KAnonymitySummary: Sendable, Hashable, Codable {
    /// The k the protocol asks for.
    public var requestedK: Int
    /// The smallest class size after the pass (nil when no participant is left).
    package var achievedK: Int?
    /// The quasi-identifier columns of `participants.csv`.
    public var quasiIdentifiers: [String]
    /// Number of equivalence classes after the pass.
    public var classes: Int
    /// Column → cells emptied in rows of small classes.
    package var suppressedValues: [String: Int]
    /// Participants removed entirely.
    package var suppressedParticipants: Int
    /// Column → the generalization applied to the whole column (`10-year range`, `quarter`,
    /// `suppressed`); columns published as de-identified are absent.
    package var generalized: [String: String]
    /// The share of rows suppression was allowed to handle instead of generalization.
    package var suppressionLimit: Double?
    /// Sensitive fields for l-diversity, with their published table and column.
    public var sensitive: [SensitiveField]?
    /// What an acquaintance can know from the records (``AcquaintanceProfile``), added to the
    /// quasi-identifiers for ``recordAchievedK``; nil when the export published no records.
    package var recordQuasiIdentifiers: [String]?
    /// The smallest class over the quasi-identifiers plus ``recordQuasiIdentifiers``.
    package var recordAchievedK: Int?
    /// Whether the pass generalized and suppressed to reach k over them too
    /// (`k_anonymity.record_attributes: enforce`), or only states ``recordAchievedK``.
    package var recordAttributesEnforced: Bool?
    /// Participant–kind pairs whose records were left out to reach k over the record attributes
    /// (``RecordAttributeGeneralizer``); nil when not enforced.
    package var recordKindsLeftOut: Int?
    /// The records those pairs held (counted at write).
    package var recordsLeftOut: Int?
    /// Whether records carry their device class (`source`); false when every source was left
    /// out to reach k; nil when not enforced.
    package var deviceClassPublished: Bool?

    /// A summary as given.
    package init(
        requestedK: Int, achievedK: Int?, quasiIdentifiers: [String], classes: Int, suppressedValues: [String: Int],
        suppressedParticipants: Int, generalized: [String: String] = [:], suppressionLimit: Double? = nil, sensitive: [SensitiveField]? = nil
    ) {
        self.requestedK = requestedK
        self.achievedK = achievedK
        self.quasiIdentifiers = quasiIdentifiers
        self.classes = classes
        self.suppressedValues = suppressedValues
        self.suppressedParticipants = suppressedParticipants
        self.generalized = generalized
        self.suppressionLimit = suppressionLimit
        self.sensitive = sensitive
    }

    /// Decodes reports written before `generalized` existed as well.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        requestedK = try c.decode(Int.self, forKey: .requestedK)
        achievedK = try c.decodeIfPresent(Int.self, forKey: .achievedK)
        quasiIdentifiers = try c.decode([String].self, forKey: .quasiIdentifiers)
        classes = try c.decode(Int.self, forKey: .classes)
        suppressedValues = try c.decode([String: Int].self, forKey: .suppressedValues)
        suppressedParticipants = try c.decode(Int.self, forKey: .suppressedParticipants)
        generalized = try c.decodeIfPresent([String: String].self, forKey: .generalized) ?? [:]
        suppressionLimit = try c.decodeIfPresent(Double.self, forKey: .suppressionLimit)
        sensitive = try c.decodeIfPresent([SensitiveField].self, forKey: .sensitive)
        recordQuasiIdentifiers = try c.decodeIfPresent([String].self, forKey: .recordQuasiIdentifiers)
        recordAchievedK = try c.decodeIfPresent(Int.self, forKey: .recordAchievedK)
        recordAttributesEnforced = try c.decodeIfPresent(Bool.self, forKey: .recordAttributesEnforced)
        recordKindsLeftOut = try c.decodeIfPresent(Int.self, forKey: .recordKindsLeftOut)
        recordsLeftOut = try c.decodeIfPresent(Int.self, forKey: .recordsLeftOut)
        deviceClassPublished = try c.decodeIfPresent(Bool.self, forKey: .deviceClassPublished)
    }

    enum CodingKeys: String, CodingKey {
        case classes, generalized, sensitive
        case requestedK = "requested_k"
        case achievedK = "achieved_k"
        case quasiIdentifiers = "quasi_identifiers"
        case suppressedValues = "suppressed_values"
        case suppressedParticipants = "suppressed_participants"
        case suppressionLimit = "suppression_limit"
        case recordQuasiIdentifiers = "record_quasi_identifiers"
        case recordAchievedK = "record_achieved_k"
        case recordAttributesEnforced = "record_attributes_enforced"
        case recordKindsLeftOut = "record_kinds_left_out"
        case recordsLeftOut = "records_left_out"
        case deviceClassPublished = "device_class_published"
    }
}
