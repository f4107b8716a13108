import CohortCore
import Foundation
import Testing

@testable import CohortDeid

struct KAnonymizerTests {
    static let all = QuasiIdentifier.allCases

    /// A cohort with every participant-level column filled, drawn from `seed`.
    static func rows(count: Int, seed: UInt64) -> [DeidentifiedParticipant] {
        var g = SeededRandom(seed: seed)
        let base = CivilDate(year: 2025, month: 1, day: 1) ?? CivilDate(daysSinceEpoch: 20_089)
        return (0..<count).map { i in
            var row = DeidentifiedParticipant(pseudonym: "P\(i)")
            row.birthYear = Int.random(in: 1940...2000, using: &g)
            row.sex = [Sex.female, .male, .other].randomElement(using: &g)
            row.zip3 = ["100", "606", "627", "941", "021", "000", "191", "945"].randomElement(using: &g)
            row.ageBand = ["18–<30", "30–<40", "40–<50", "50–<60", "60–<70", "70–<80", "80–<90"].randomElement(using: &g)
            row.enrolledOn = base.adding(days: Int.random(in: 0..<365, using: &g))
            row.status = Int.random(in: 0..<10, using: &g) == 0 ? .stopped : .active
            if row.status == .stopped, let enrolled = row.enrolledOn {
                row.withdrawnAt = Timestamp(epochMilliseconds: Int64(enrolled.daysSinceEpoch + 30) * 86_400_000 + 43_200_000, utcOffsetSeconds: -18_000)
            }
            row.timeZone = ["America/Chicago", "America/New_York", "Europe/Berlin", "Europe/Paris"].randomElement(using: &g)
            row.devices = [["smartwatch"], ["phone"], ["smartwatch", "phone"]].randomElement(using: &g)
            row.utcOffset = ["-06:00", "-05:00", "+01:00"].randomElement(using: &g)
            return row
        }
    }

    /// What `participants.csv` shows for a row, written out independently of ``QuasiIdentifier``.
    static func published(_ row: DeidentifiedParticipant) -> [String] {
        [
            row.sex?.rawValue ?? "", row.birthYearRange ?? row.birthYear.map(String.init) ?? "", row.ageBand ?? "", row.zip3 ?? "",
            row.enrollmentPeriod ?? row.enrolledOn?.description ?? "", row.status?.rawValue ?? "",
            row.withdrawalPeriod ?? row.withdrawnAt?.iso8601 ?? "", row.timeZone ?? "", (row.devices ?? []).joined(separator: ";"),
            row.utcOffset ?? "",
        ]
    }

    /// The smallest class size, counted by comparing every pair of published rows.
    static func bruteForceK(_ rows: [DeidentifiedParticipant]) -> Int? {
        let texts = rows.map(published)
        return texts.map { row in texts.filter { $0 == row }.count }.min()
    }

    @Test(arguments: [(2, 50 as UInt64), (5, 51), (10, 52), (3, 53)])
    func achievesRequestedKOverEveryPublishedColumn(k: Int, seed: UInt64) throws {
        let input = Self.rows(count: 400, seed: seed)
        let result = try KAnonymizer(k: k, quasiIdentifiers: Self.all).apply(input)
        let achieved = try #require(Self.bruteForceK(result.participants))
        #expect(achieved >= k)
        #expect(result.summary.achievedK == achieved)
        #expect(result.summary.classes == Set(result.participants.map(Self.published)).count)
        #expect(result.participants.count + result.suppressedPseudonyms.count == input.count)
        #expect(result.summary.suppressedParticipants == result.suppressedPseudonyms.count)
        // Suppression is the last resort: at most the limit's share of rows is touched by it.
        let touched = result.summary.suppressedParticipants + result.summary.suppressedValues.values.reduce(0, +)
        #expect(result.summary.suppressedParticipants <= input.count / 20)
        #expect(touched <= input.count / 20 * QuasiIdentifier.allCases.count)
        // Generalized values contain the true value, never replace it with another exact one.
        let original = Dictionary(uniqueKeysWithValues: input.map { ($0.pseudonym, $0) })
        for row in result.participants {
            let before = try #require(original[row.pseudonym])
            let year = try #require(before.birthYear)
            if let range = row.birthYearRange {
                let bounds = range.split(separator: "–").compactMap { Int($0) }
                #expect(bounds.count == 2 && bounds[0] <= year && year <= bounds[1], "\(range) does not contain the birth year")
            } else {
                #expect(row.birthYear == nil || row.birthYear == year)
            }
            if let period = row.enrollmentPeriod, let date = before.enrolledOn {
                #expect(period.hasPrefix(String(date.year)))
                if period.count == 7, !period.contains("Q") { #expect(period == String(date.description.prefix(7))) }
            }
            // Never blanked: records carry it; generalized, it is UTC for everyone.
            #expect(row.utcOffset == before.utcOffset || (result.summary.generalized["utc_offset"] != nil && row.utcOffset == "+00:00"))
            #expect(row.status == before.status)  // never blanked: FHIR needs it
        }
    }

    @Test func generalizesBeforeSuppressing() throws {
        // One row per birth year in 1960...1989 and sex: exact years make classes of 1, 5-year
        // ranges classes of 5 — no row needs suppression.
        var input: [DeidentifiedParticipant] = []
        for year in 1960...1989 {
            for sex in [Sex.female, .male] {
                var row = DeidentifiedParticipant(pseudonym: "P\(year)\(sex.rawValue)")
                row.birthYear = year
                row.sex = sex
                input.append(row)
            }
        }
        let result = try KAnonymizer(k: 5, quasiIdentifiers: [.sex, .birthYear], suppressionLimit: 0).apply(input)
        #expect(result.suppressedPseudonyms.isEmpty)
        #expect(result.summary.suppressedValues.isEmpty)
        #expect(result.summary.generalized == ["birth_year": "5-year range"])
        #expect(result.participants.allSatisfy { $0.sex != nil && $0.birthYear == nil && $0.birthYearRange != nil })
        #expect(Set(result.participants.compactMap(\.birthYearRange)).count == 6)
        #expect(result.participants.first?.birthYearRange == "1960–1964")
        #expect(result.summary.achievedK == 5)
    }

    @Test func datesGeneralizeToMonthThenQuarterThenYear() throws {
        let start = try #require(CivilDate(year: 2025, month: 1, day: 1))
        // One enrollment per day: months hold 28-31 rows (k = 20 reached at month level).
        let input = (0..<365).map { day -> DeidentifiedParticipant in
            var row = DeidentifiedParticipant(pseudonym: "P\(day)")
            row.enrolledOn = start.adding(days: day)
            return row
        }
        let monthly = try KAnonymizer(k: 20, quasiIdentifiers: [.enrolledOn], suppressionLimit: 0).apply(input)
        #expect(monthly.summary.generalized == ["enrolled_on": "month"])
        #expect(monthly.participants.first?.enrollmentPeriod == "2025-01" && monthly.participants.last?.enrollmentPeriod == "2025-12")
        let quarterly = try KAnonymizer(k: 40, quasiIdentifiers: [.enrolledOn], suppressionLimit: 0).apply(input)
        #expect(quarterly.summary.generalized == ["enrolled_on": "quarter"])
        #expect(Set(quarterly.participants.compactMap(\.enrollmentPeriod)) == ["2025-Q1", "2025-Q2", "2025-Q3", "2025-Q4"])
        let yearly = try KAnonymizer(k: 100, quasiIdentifiers: [.enrolledOn], suppressionLimit: 0).apply(input)
        #expect(Set(yearly.participants.compactMap(\.enrollmentPeriod)) == ["2025"])
    }

    @Test func ageBandsWidenByMergingAdjacentBands() {
        let edges = AgeBandEdges(labels: ["18–<30", "30–<40", "40–<50", "50–<60", "60–<70", "70–<80", "80–<90", "90+"])
        #expect(edges.widen("30–<40", level: 1) == "18–<40")
        #expect(edges.widen("40–<50", level: 1) == "40–<60")
        #expect(edges.widen("80–<90", level: 1) == "80–<90")
        #expect(edges.widen("50–<60", level: 2) == "18–<60")
        #expect(edges.widen("70–<80", level: 2) == "60–<90")
        #expect(edges.widen("90+", level: 2) == "90+")
        // The labels seen at init are remembered per level; others (a plain age) are computed.
        for label in ["18–<30", "30–<40", "70–<80", "90+", "45", "<18", "≥80"] {
            for level in 1...3 { #expect(edges.widen(label, level: level) == edges.widening(label, level: level), "\(label) \(level)") }
        }
        #expect(edges.widen("45", level: 1) == "40–<60")
    }

    @Test func zipAndTimeZoneGeneralizeToRegions() throws {
        var input: [DeidentifiedParticipant] = []
        for (i, zip) in ["100", "101", "102", "103", "104", "941", "945", "946", "947", "948"].enumerated() {
            var row = DeidentifiedParticipant(pseudonym: "P\(i)")
            row.zip3 = zip
            row.timeZone = i < 5 ? "America/New_York" : "America/Los_Angeles"
            input.append(row)
        }
        let result = try KAnonymizer(k: 5, quasiIdentifiers: [.zip3, .timeZone], suppressionLimit: 0).apply(input)
        #expect(result.summary.generalized["zip3"] == "region (first digit)")
        #expect(Set(result.participants.compactMap(\.zip3)) == ["1**", "9**"])
        #expect(result.summary.achievedK == 5)
    }

    static func offsetRows() -> [DeidentifiedParticipant] {
        var input = (0..<6).map { i -> DeidentifiedParticipant in
            var row = DeidentifiedParticipant(pseudonym: "P\(i)")
            row.utcOffset = "-05:00"
            row.sex = .female
            row.withdrawnAt = Timestamp(epochMilliseconds: 1_750_000_000_000, utcOffsetSeconds: -18_000)
            return row
        }
        input[5].utcOffset = "+05:45"
        return input
    }

    @Test func aUniqueUTCOffsetRemovesTheRowInsteadOfBlankingIt() throws {
        // One row of six may be suppressed (20%): cheaper than writing everyone's times in UTC.
        let result = try KAnonymizer(k: 5, quasiIdentifiers: [.sex, .utcOffset], suppressionLimit: 0.2).apply(Self.offsetRows())
        #expect(result.suppressedPseudonyms == ["P5"])
        #expect(result.summary.suppressedValues.isEmpty)  // the removed row's emptied cells do not count
        #expect(result.participants.allSatisfy { $0.utcOffset == "-05:00" })
    }

    @Test func withoutSuppressionTheOffsetIsGeneralizedToUTCForEveryone() throws {
        let result = try KAnonymizer(k: 5, quasiIdentifiers: [.sex, .utcOffset], suppressionLimit: 0).apply(Self.offsetRows())
        #expect(result.suppressedPseudonyms.isEmpty)
        #expect(result.summary.generalized["utc_offset"] == "UTC (every time written at +00:00)")
        #expect(result.summary.achievedK == 6)
        #expect(result.participants.allSatisfy { $0.utcOffset == "+00:00" && $0.withdrawnAt?.utcOffsetSeconds == 0 })
        // The same instants: only the offset they are written at changes.
        #expect(result.participants.allSatisfy { $0.withdrawnAt?.epochMilliseconds == 1_750_000_000_000 })
    }

    /// Greedy steps overshoot; the ones a later step made unnecessary are undone. Recomputed here
    /// from the rows: lowering any generalized column by one level would leave more rows in
    /// classes below k than the suppression limit allows.
    @Test(arguments: [(5, UInt64(61)), (3, UInt64(62)), (10, UInt64(63))])
    func noGeneralizationStepIsLeftThatKDoesNotNeed(k: Int, seed: UInt64) throws {
        let input = Self.rows(count: 120, seed: seed)
        let anonymizer = try KAnonymizer(k: k, quasiIdentifiers: Self.all)
        let result = anonymizer.apply(input)
        let edges = AgeBandEdges(labels: input.compactMap(\.ageBand))
        var levels: [QuasiIdentifier: Int] = [:]
        for (name, levelName) in result.summary.generalized {
            let qi = try #require(QuasiIdentifier(rawValue: name))
            let level = try #require((1...qi.maxLevel).first(where: { qi.levelName($0) == levelName }))
            levels[qi] = level
        }
        let budget = Int((Double(input.count) * anonymizer.suppressionLimit).rounded(.down))
        func smallRows(_ levels: [QuasiIdentifier: Int]) -> Int {
            var sizes: [[String?]: Int] = [:]
            for row in input { sizes[Self.all.map { $0.value(row, level: levels[$0, default: 0], ageEdges: edges) }, default: 0] += 1 }
            return sizes.values.filter { $0 < k }.reduce(0, +)
        }
        guard smallRows(levels) <= budget else {
            // Generalization alone could not reach k: then every column went as far as it goes.
            #expect(Self.all.allSatisfy { levels[$0, default: 0] == $0.maxLevel })
            return
        }
        for (qi, level) in levels {
            var lower = levels
            lower[qi] = level - 1
            #expect(smallRows(lower) > budget, "\(qi.rawValue) could stay at level \(level - 1)")
        }
    }

    /// `rows(count:seed:)` with gaps and the values other paths produce: empty cells in every
    /// column but `status`, ranges and periods already generalized by the policy, `90+` and
    /// ages outside the policy bands, non-ASCII time zones.
    static func variedRows(count: Int, seed: UInt64) -> [DeidentifiedParticipant] {
        var g = SeededRandom(seed: seed &+ 1_000)
        return rows(count: count, seed: seed).map { original in
            var row = original
            if g.unit() < 0.08 { row.sex = nil }
            if g.unit() < 0.05 { row.birthYear = nil }
            if g.unit() < 0.05, let year = row.birthYear {
                row.birthYear = nil
                row.birthYearRange = "\(year / 10 * 10)–\(year / 10 * 10 + 9)"
            }
            if g.unit() < 0.06 { row.ageBand = g.pick(["90+", "<18", "45", nil]) }
            if g.unit() < 0.07 { row.zip3 = nil }
            if g.unit() < 0.04 { row.enrolledOn = nil }
            if g.unit() < 0.03, let date = row.enrolledOn {
                row.enrolledOn = nil
                row.enrollmentPeriod = String(date.description.prefix(7))
            }
            if g.unit() < 0.05 { row.timeZone = g.pick(["Europe/Zürich", "Asia/Tokyo", "UTC", nil]) }
            if g.unit() < 0.1 { row.devices = nil }
            if g.unit() < 0.05 { row.utcOffset = g.pick(["+09:00", "+05:45", nil]) }
            return row
        }
    }

    /// The compact table (interned codes in one flat array, classes by sorting) against the old `[[String?]]` table kept
    /// verbatim in ``ReferenceKAnonymizer``: the same rows in the same order, the same suppressed
    /// participants and the same summary, over thousands of rows, several k, suppression limits
    /// and column sets.
    @Test(arguments: [
        (5, 0.05, QuasiIdentifier.allCases, UInt64(70)),
        (3, 0.0, QuasiIdentifier.allCases, UInt64(71)),
        (10, 0.2, [QuasiIdentifier.sex, .birthYear, .zip3, .ageBand], UInt64(72)),
        (2, 0.01, [QuasiIdentifier.enrolledOn, .status, .withdrawnAt, .timeZone, .utcOffset], UInt64(73)),
        (25, 0.05, [QuasiIdentifier.sex, .birthYear, .enrolledOn, .devices, .utcOffset], UInt64(74)),
    ])
    func matchesTheStringTableImplementation(k: Int, limit: Double, columns: [QuasiIdentifier], seed: UInt64) throws {
        let input = Self.variedRows(count: 3_000, seed: seed)
        let anonymizer = try KAnonymizer(k: k, quasiIdentifiers: columns, suppressionLimit: limit)
        let result = anonymizer.apply(input)
        let reference = ReferenceKAnonymizer(anonymizer).apply(input)
        #expect(result.participants.map(\.pseudonym) == reference.participants.map(\.pseudonym))
        // The first row that differs, not the whole table, when they do not agree.
        let differing = zip(result.participants, reference.participants).first { $0 != $1 }
        #expect(differing == nil, "\(differing.map { "\($0.0) ≠ reference \($0.1)" } ?? "")")
        #expect(result.suppressedPseudonyms == reference.suppressedPseudonyms)
        #expect(result.summary == reference.summary)
        // The cases reach every stage: generalization, and cell or row suppression in some.
        #expect(!result.summary.generalized.isEmpty)
    }

    /// Every column a table can have has its bit in a row's mask of emptied cells.
    @Test func everyColumnHasABitInTheEmptiedMask() {
        #expect(QuasiIdentifier.allCases.count <= KAnonymizer.EmptiedCells.bitWidth)
    }

    @Test func deterministic() throws {
        let input = Self.rows(count: 300, seed: 60)
        let anonymizer = try KAnonymizer(k: 5, quasiIdentifiers: Self.all)
        #expect(anonymizer.apply(input) == anonymizer.apply(input))
    }

    @Test func alreadyAnonymousTableIsUntouched() throws {
        let row = { (name: String) -> DeidentifiedParticipant in
            var r = DeidentifiedParticipant(pseudonym: name)
            r.birthYear = 1980
            r.sex = .female
            r.zip3 = "100"
            return r
        }
        let input = ["A", "B", "C"].map(row)
        let result = try KAnonymizer(k: 3, quasiIdentifiers: Self.all).apply(input)
        #expect(result.participants == input)
        #expect(result.summary.achievedK == 3 && result.summary.classes == 1 && result.summary.suppressedValues.isEmpty)
        #expect(result.summary.generalized.isEmpty)
    }

    @Test func tooFewParticipantsAreSuppressedEntirely() throws {
        let input = Self.rows(count: 3, seed: 61)
        let result = try KAnonymizer(k: 5, quasiIdentifiers: Self.all).apply(input)
        #expect(result.participants.isEmpty)
        #expect(result.suppressedPseudonyms == ["P0", "P1", "P2"])
        #expect(result.summary.achievedK == nil)
    }

    @Test func policyQuasiIdentifiersAreEveryPublishedColumn() throws {
        let policy = Fixtures.studyProtocol(kAnonymity: .init(k: 3, quasiIdentifiers: ["participant.sex"], sensitive: ["medication_log.text"]))
            .deidentification
        let anonymizer = try #require(try KAnonymizer(policy: policy))
        #expect(anonymizer.quasiIdentifiers.map(\.rawValue) == policy.publishedParticipantColumns)
        #expect(anonymizer.quasiIdentifiers.contains(.utcOffset))  // records.start is published with its offset
        #expect(anonymizer.quasiIdentifiers.contains(.ageBand))  // derived columns count too
        #expect(anonymizer.sensitive == [SensitiveField(field: "medication_log.text", table: "medications", column: "text")])
    }

    @Test func invalidSettingsAreRefused() {
        #expect(throws: CohortError.self) { try KAnonymizer(k: 0, quasiIdentifiers: Self.all) }
        #expect(throws: CohortError.self) { try KAnonymizer(k: 5, quasiIdentifiers: Self.all, suppressionLimit: 2) }
        var fields = Fixtures.allFields
        fields["medication_log.text"] = FieldRule(.drop)
        let policy = Fixtures.studyProtocol(fields: fields, kAnonymity: .init(k: 3, quasiIdentifiers: [], sensitive: ["medication_log.text"]))
            .deidentification
        #expect(throws: CohortError.self) { try KAnonymizer(policy: policy) }
    }

    /// Reports written before generalization existed still decode (nothing generalized).
    @Test func oldSummariesDecode() throws {
        let old = #"{"requested_k":3,"achieved_k":3,"quasi_identifiers":["participant.zip"],"classes":4,"suppressed_values":{"participant.zip":2},"suppressed_participants":1}"#
        let summary = try JSONDecoder().decode(KAnonymitySummary.self, from: Data(old.utf8))
        #expect(summary.generalized.isEmpty && summary.sensitive == nil && summary.suppressionLimit == nil)
        #expect(summary.achievedK == 3 && summary.suppressedValues == ["participant.zip": 2])
    }
}
