package import CohortCore
package import Foundation

/// Computes compliance rates from a stream of participants and records, without storing records.
///
/// Definition (see `docs/compliance.md`):
/// - the unit is the participant-day: a calendar day in the participant's IANA time zone
///   (DST-correct: a 23- or 25-hour day is one day);
/// - the counted window runs from the enrollment day (inclusive) to the earliest of the last
///   study day (enrollment + duration − 1), the day before the withdrawal day (the withdrawal
///   day itself is partial and not counted), and the last fully closed day (the day before the
///   participant's local day at `asOf`: the current, open day never counts);
/// - a day meets a rule when it has at least `minPerDay` records of the rule's counted kinds;
///   every record counts towards `minPerDay`, including duplicates, but a day counts once;
/// - rate = days met / days counted; no counted day → rate N/A (nil), never 100 %;
///   compliant = rate ≥ threshold.
///
/// Use: `add(participant:)` for every participant first, then `add(recordOf:kind:start:)` for
/// every record (any order), then `report()`. Memory: one small counter per participant, rule
/// and counted day.
package struct ComplianceEngine: Sendable {
    private let studyProtocol: StudyProtocol
    private let asOf: Date
    private let rules: [ComplianceRule]
    /// For each record kind, the indices of the rules it counts towards (records per day).
    private let rulesByKind: [RecordKind: [Int]]
    /// For each cumulative kind, the indices of the `min_total` rules over it (daily totals).
    private let totalRulesByKind: [RecordKind: [Int]]
    /// Participants in the order added; `index` maps ids into it (in-place mutation, no copies).
    private var states: [ParticipantState] = []
    private var index: [UUID: Int] = [:]
    private var unmatchedRecords = 0

    /// Creates an engine for the rules of `studyProtocol`, judged at the instant `asOf`.
    package init(studyProtocol: StudyProtocol, asOf: Date) {
        self.studyProtocol = studyProtocol
        self.asOf = asOf
        self.rules = studyProtocol.compliance.rules
        var byKind: [RecordKind: [Int]] = [:]
        var totalsByKind: [RecordKind: [Int]] = [:]
        for (index, rule) in rules.enumerated() {
            for kind in rule.countedKinds(in: studyProtocol) {
                if rule.minTotal != nil { totalsByKind[kind, default: []].append(index) } else { byKind[kind, default: []].append(index) }
            }
        }
        self.rulesByKind = byKind
        self.totalRulesByKind = totalsByKind
    }

    /// Adds a participant. Throws when their time zone is unknown (the error names their code)
    /// or when the same participant is added twice.
    public mutating func add(participant subject: ComplianceSubject) throws {
        guard index[subject.id] == nil else {
            throw CohortError(
                .conflict, "participant \(subject.code) was added to the compliance computation twice",
                hint: "add each participant once")
        }
        let zone = try subject.resolvedTimeZone()
        let enrollDay = subject.enrolledOn.daysSinceEpoch
        let studyEnd = enrollDay + studyProtocol.durationDays - 1
        let today = Timestamp(asOf, in: zone).localDate(in: zone).daysSinceEpoch
        let lastClosed = today - 1
        var lastDay = lastClosed
        var windowEnd = ComplianceReport.WindowEnd.lastClosedDay
        if studyEnd < lastDay {
            lastDay = studyEnd
            windowEnd = .studyEnd
        }
        if let withdrawnAt = subject.withdrawnAt {
            let dayBefore = withdrawnAt.localDate(in: zone).daysSinceEpoch - 1
            // Ties go to the withdrawal: it is the more informative reason.
            if dayBefore <= lastDay {
                lastDay = dayBefore
                windowEnd = .withdrawal
            }
        }
        let counted = max(0, lastDay - enrollDay + 1)
        let ongoing = subject.status == .active && subject.withdrawnAt == nil && studyEnd >= today
        index[subject.id] = states.count
        states.append(
            ParticipantState(
                subject: subject, clock: DayClock(timeZone: zone), enrollDay: enrollDay, countedDays: counted, lastClosedDay: lastClosed,
                windowEnd: windowEnd, ongoing: ongoing, counters: [UInt16](repeating: 0, count: counted * rules.count)))
    }

    /// Counts one record. Records of kinds no rule counts, outside the participant's counted
    /// window (before enrollment, after its end), or of participants never added are ignored;
    /// the last are tallied in `ComplianceReport.unmatchedRecords`.
    public mutating func add(recordOf participantID: UUID, kind: RecordKind, start: Timestamp) {
        guard let ruleIndices = rulesByKind[kind] else { return }
        guard let position = index[participantID] else {
            unmatchedRecords += 1
            return
        }
        states[position].count(start, ruleIndices: ruleIndices)
    }

    /// Whether a rule counts daily totals (`min_total`): its records must come through
    /// ``add(sampleOf:kind:start:end:value:source:)``, with their values.
    package var needsSamples: Bool { !totalRulesByKind.isEmpty }

    /// Whether records of `kind` go to a `min_total` rule (and so need their values).
    package func countsTotals(of kind: RecordKind) -> Bool { totalRulesByKind[kind] != nil }

    /// Adds one record's value to the daily totals of the `min_total` rules over its kind (other
    /// rules count it through ``add(recordOf:kind:start:)``). Records of participants never added
    /// are ignored here (they are tallied there).
    public mutating func add(sampleOf participantID: UUID, kind: RecordKind, start: Timestamp, end: Timestamp?, value: Double, source: String?) {
        guard let ruleIndices = totalRulesByKind[kind], let position = index[participantID] else { return }
        for rule in ruleIndices {
            states[position].totals[rule, default: DailyTotals(priority: studyProtocol.sourcePriority)].add(
                start: start, end: end, value: value, source: source)
        }
    }

    /// The report for everything added so far.
    public func report() -> ComplianceReport {
        var participants: [ComplianceReport.ParticipantCompliance] = []
        var reminders: [ComplianceReport.Reminder] = []
        participants.reserveCapacity(states.count)
        for var state in states {
            state.settleTotals(rules: rules)
            let entry = state.result(rules: rules)
            participants.append(entry)
            if let reminder = Self.reminder(for: entry, state: state, rules: rules) { reminders.append(reminder) }
        }
        let summaries = Self.summaries(rules: rules, studyProtocol: studyProtocol, participants: participants)
        return ComplianceReport(
            studyID: studyProtocol.id, protocolRevision: studyProtocol.revision, asOf: Timestamp(asOf, in: TimeZone.gmt),
            rules: summaries, participants: participants, reminders: reminders, unmatchedRecords: unmatchedRecords)
    }

    static func reminder(
        for entry: ComplianceReport.ParticipantCompliance, state: ParticipantState, rules: [ComplianceRule]
    ) -> ComplianceReport.Reminder? {
        guard entry.ongoing else { return nil }
        var items: [ComplianceReport.Reminder.Item] = []
        for (rule, result) in zip(rules, entry.rules) {
            guard let rate = result.rate else { continue }
            let below = rate < rule.threshold
            guard below || result.missedLastClosedDay else { continue }
            items.append(
                .init(
                    ruleID: rule.id, description: rule.description, rate: rate, threshold: rule.threshold,
                    daysMissed: result.daysMissed, daysExpected: result.daysExpected, belowThreshold: below,
                    missedLastClosedDay: result.missedLastClosedDay))
        }
        guard !items.isEmpty else { return nil }
        return .init(
            participantID: state.subject.id, code: state.subject.code, lastClosedDay: CivilDate(daysSinceEpoch: state.lastClosedDay),
            rules: items)
    }

    /// Cohort summaries per rule over `participants` (each entry's rules in protocol order).
    static func summaries(
        rules: [ComplianceRule], studyProtocol: StudyProtocol, participants: [ComplianceReport.ParticipantCompliance]
    ) -> [ComplianceReport.RuleSummary] {
        rules.map { rule in
            var summary = ComplianceReport.RuleSummary(
                ruleID: rule.id, description: rule.description, minPerDay: rule.minPerDay, threshold: rule.threshold,
                kinds: rule.countedKinds(in: studyProtocol).sorted(), participants: 0, notApplicable: 0, compliantCount: 0,
                meanRate: nil, medianRate: nil, shareCompliant: nil)
            summary.recompute(from: participants)
            return summary
        }
    }
}

extension ComplianceReport.RuleSummary {
    /// Recomputes the cohort statistics of this rule from `participants`.
    mutating func recompute(from participants: [ComplianceReport.ParticipantCompliance]) {
        let results = participants.compactMap { $0.result(for: ruleID) }
        recompute(results: results.count, sortedRates: results.compactMap(\.rate).sorted(), compliant: results.filter { $0.compliant == true }.count)
    }

    /// Sets the cohort statistics from `results` participant results of this rule, their rates
    /// (ascending) and how many were compliant.
    mutating func recompute(results: Int, sortedRates rates: [Double], compliant: Int) {
        self.participants = results
        notApplicable = results - rates.count
        compliantCount = compliant
        if rates.isEmpty {
            meanRate = nil
            medianRate = nil
            shareCompliant = nil
        } else {
            let mid = rates.count / 2
            meanRate = rates.reduce(0, +) / Double(rates.count)
            medianRate = rates.count % 2 == 1 ? rates[mid] : (rates[mid - 1] + rates[mid]) / 2
            shareCompliant = Double(compliantCount) / Double(rates.count)
        }
    }
}

/// Per-participant counters: one `UInt16` per rule and counted day (saturating).
struct ParticipantState: Sendable {
    let subject: ComplianceSubject
    var clock: DayClock
    let enrollDay: Int
    let countedDays: Int
    let lastClosedDay: Int
    let windowEnd: ComplianceReport.WindowEnd
    let ongoing: Bool
    /// `counters[rule * countedDays + dayOffset]`: records of that rule's kinds on that day (saturating).
    var counters: [UInt16]
    /// Per `min_total` rule: the samples whose overlap-free daily totals decide its days.
    var totals: [Int: DailyTotals] = [:]

    /// Marks each day of a `min_total` rule met (counter 1) when its daily total reaches the rule's minimum.
    mutating func settleTotals(rules: [ComplianceRule]) {
        for (rule, accumulator) in totals {
            guard let minimum = rules[rule].minTotal else { continue }
            for total in accumulator.totals(in: clock.timeZone) {
                let offset = total.day.daysSinceEpoch - enrollDay
                guard offset >= 0 && offset < countedDays else { continue }
                counters[rule * countedDays + offset] = total.value >= minimum ? 1 : 0
            }
        }
        totals = [:]
    }

    /// Counts a record at `start` towards the rules at `ruleIndices`, if its local day is counted.
    mutating func count(_ start: Timestamp, ruleIndices: [Int]) {
        let offset = clock.day(of: start) - enrollDay
        guard offset >= 0 && offset < countedDays else { return }
        for rule in ruleIndices {
            let slot = rule * countedDays + offset
            if counters[slot] < UInt16.max { counters[slot] += 1 }
        }
    }

    func result(rules: [ComplianceRule]) -> ComplianceReport.ParticipantCompliance {
        let results = rules.enumerated().map { ruleIndex, rule in
            let days = counters[(ruleIndex * countedDays)..<((ruleIndex + 1) * countedDays)]
            let needed = max(1, rule.minPerDay)
            var weeks: [ComplianceReport.WeekResult] = []
            var met = 0
            var weekStart = 0
            while weekStart < countedDays {
                let weekEnd = min(weekStart + 7, countedDays)
                let weekMet = days[(days.startIndex + weekStart)..<(days.startIndex + weekEnd)].filter { Int($0) >= needed }.count
                met += weekMet
                weeks.append(
                    .init(
                        week: weekStart / 7 + 1, startsOn: CivilDate(daysSinceEpoch: enrollDay + weekStart), daysMet: weekMet,
                        daysExpected: weekEnd - weekStart))
                weekStart = weekEnd
            }
            let rate = countedDays > 0 ? Double(met) / Double(countedDays) : nil
            let missedLast = days.last.map { Int($0) < needed } ?? false
            return ComplianceReport.RuleResult(
                ruleID: rule.id, rate: rate, daysMet: met, daysExpected: countedDays, compliant: rate.map { $0 >= rule.threshold },
                missedLastClosedDay: missedLast, weeks: weeks)
        }
        return .init(
            participantID: subject.id, code: subject.code, timeZone: subject.timeZone, enrolledOn: subject.enrolledOn,
            status: subject.status, lastCountedDay: countedDays > 0 ? CivilDate(daysSinceEpoch: enrollDay + countedDays - 1) : nil,
            windowEnd: windowEnd, ongoing: ongoing, rules: results)
    }
}
