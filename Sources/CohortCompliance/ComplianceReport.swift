public import CohortCore
public import Foundation

/// The result of a compliance computation: per participant and rule, per rule across the
/// cohort, and the participants to remind.
///
/// Encodes to JSON with snake_case keys (written to `data/reports/compliance.json` in exports
/// and printed by `cohort compliance --format json`). A rate is a fraction in 0…1, or `null`
/// when not applicable (no closed day to judge yet); it is never reported as 100 % then.
public struct ComplianceReport: Sendable, Hashable, Codable {
    /// The schema identifier of this JSON shape.
    package static let schemaID = "cohort/compliance-report@1"

    /// Schema identifier (`cohort/compliance-report@1`).
    public var schema: String = ComplianceReport.schemaID
    /// The protocol's study id.
    public var studyID: String
    /// The protocol revision the rules come from.
    public var protocolRevision: Int
    /// The instant the report was computed for (UTC): the current day of each participant
    /// (in their own zone) at this instant is open and not counted.
    public var asOf: Timestamp
    /// One summary per protocol rule, in protocol order.
    public var rules: [RuleSummary]
    /// One entry per participant, in the order they were added.
    public var participants: [ParticipantCompliance]
    /// Participants to remind (see `Reminder`), in participant order.
    public var reminders: [Reminder]
    /// Records whose participant was never added to the engine; they were ignored.
    public var unmatchedRecords: Int

    /// Creates a report from its parts (the engine makes these; tests and decoders may too).
    package init(
        studyID: String, protocolRevision: Int, asOf: Timestamp, rules: [RuleSummary], participants: [ParticipantCompliance],
        reminders: [Reminder], unmatchedRecords: Int = 0
    ) {
        self.studyID = studyID
        self.protocolRevision = protocolRevision
        self.asOf = asOf
        self.rules = rules
        self.participants = participants
        self.reminders = reminders
        self.unmatchedRecords = unmatchedRecords
    }

    enum CodingKeys: String, CodingKey {
        case schema, rules, participants, reminders
        case studyID = "study_id"
        case protocolRevision = "protocol_revision"
        case asOf = "as_of"
        case unmatchedRecords = "unmatched_records"
    }

    /// One participant's results.
    public struct ParticipantCompliance: Sendable, Hashable, Codable {
        /// Internal id; nil in the export form of the report.
        package var participantID: UUID?
        /// Study code (`P-0007`); nil in the export form of the report.
        public var code: String?
        /// Recipient pseudonym; set only in the export form of the report.
        public var pseudonym: String?
        /// IANA time zone the days were counted in; nil in the export form.
        public var timeZone: String?
        /// Enrollment day; nil in the export form.
        public var enrolledOn: CivilDate?
        /// Participant status when the report was made.
        public var status: ParticipantStatus
        /// The last day counted (inclusive), or nil when no day is counted yet. Nil in the export form.
        package var lastCountedDay: CivilDate?
        /// What ended the counted window.
        package var windowEnd: WindowEnd
        /// Whether the participant may still be reminded: active, not withdrawn, and the study
        /// runs at least through their current local day.
        public var ongoing: Bool
        /// One result per protocol rule, in protocol order.
        package var rules: [RuleResult]

        /// Creates a participant entry.
        package init(
            participantID: UUID?, code: String?, pseudonym: String? = nil, timeZone: String?, enrolledOn: CivilDate?,
            status: ParticipantStatus, lastCountedDay: CivilDate?, windowEnd: WindowEnd, ongoing: Bool, rules: [RuleResult]
        ) {
            self.participantID = participantID
            self.code = code
            self.pseudonym = pseudonym
            self.timeZone = timeZone
            self.enrolledOn = enrolledOn
            self.status = status
            self.lastCountedDay = lastCountedDay
            self.windowEnd = windowEnd
            self.ongoing = ongoing
            self.rules = rules
        }

        /// The label people read: the code, else the pseudonym.
        public var label: String { code ?? pseudonym ?? "" }

        /// The result for `ruleID`, if the protocol has that rule.
        public func result(for ruleID: String) -> RuleResult? { rules.first { $0.ruleID == ruleID } }

        enum CodingKeys: String, CodingKey {
            case code, pseudonym, status, ongoing, rules
            case participantID = "participant_id"
            case timeZone = "time_zone"
            case enrolledOn = "enrolled_on"
            case lastCountedDay = "last_counted_day"
            case windowEnd = "window_end"
        }
    }

    /// What ended a participant's counted window (the earliest of these wins).
    package enum WindowEnd: String, Sendable, Hashable, Codable, CaseIterable {
        /// The last study day (enrollment + duration − 1).
        case studyEnd = "study_end"
        /// The day before the withdrawal day (the withdrawal day itself is partial).
        case withdrawal
        /// The last fully closed day before the as-of instant.
        case lastClosedDay = "last_closed_day"
    }

    /// One participant's result for one rule.
    public struct RuleResult: Sendable, Hashable, Codable {
        /// The rule's id.
        package var ruleID: String
        /// `daysMet / daysExpected`, or nil (N/A) when `daysExpected` is 0.
        public var rate: Double?
        /// Counted days on which the rule was met.
        package var daysMet: Int
        /// Counted days (the denominator).
        package var daysExpected: Int
        /// `rate >= threshold`, or nil when the rate is N/A.
        package var compliant: Bool?
        /// Whether the last counted day did not meet the rule (false when nothing is counted).
        package var missedLastClosedDay: Bool
        /// Breakdown per study week (week 1 = enrollment day + 0…6); only weeks with counted days.
        package var weeks: [WeekResult]

        /// Creates a rule result.
        package init(
            ruleID: String, rate: Double?, daysMet: Int, daysExpected: Int, compliant: Bool?, missedLastClosedDay: Bool,
            weeks: [WeekResult]
        ) {
            self.ruleID = ruleID
            self.rate = rate
            self.daysMet = daysMet
            self.daysExpected = daysExpected
            self.compliant = compliant
            self.missedLastClosedDay = missedLastClosedDay
            self.weeks = weeks
        }

        /// Counted days on which the rule was not met.
        package var daysMissed: Int { daysExpected - daysMet }

        enum CodingKeys: String, CodingKey {
            case rate, compliant, weeks
            case ruleID = "rule_id"
            case daysMet = "days_met"
            case daysExpected = "days_expected"
            case missedLastClosedDay = "missed_last_closed_day"
        }

        /// Encodes `rate` and `compliant` as explicit nulls: a reader must see N/A, not a missing key.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(ruleID, forKey: .ruleID)
            try c.encode(rate, forKey: .rate)
            try c.encode(daysMet, forKey: .daysMet)
            try c.encode(daysExpected, forKey: .daysExpected)
            try c.encode(compliant, forKey: .compliant)
            try c.encode(missedLastClosedDay, forKey: .missedLastClosedDay)
            try c.encode(weeks, forKey: .weeks)
        }
    }

    /// One study week of one participant and rule.
    package struct WeekResult: Sendable, Hashable, Codable {
        /// 1-based study week: week 1 = enrollment day + 0…6.
        public var week: Int
        /// The week's first day; nil in the export form.
        package var startsOn: CivilDate?
        /// Counted days of this week on which the rule was met.
        package var daysMet: Int
        /// Counted days of this week (7, or fewer in the last counted week).
        package var daysExpected: Int

        /// Creates a week result.
        package init(week: Int, startsOn: CivilDate?, daysMet: Int, daysExpected: Int) {
            self.week = week
            self.startsOn = startsOn
            self.daysMet = daysMet
            self.daysExpected = daysExpected
        }

        /// `daysMet / daysExpected` (weeks are only listed when `daysExpected > 0`).
        public var rate: Double? { daysExpected > 0 ? Double(daysMet) / Double(daysExpected) : nil }

        enum CodingKeys: String, CodingKey {
            case week
            case startsOn = "starts_on"
            case daysMet = "days_met"
            case daysExpected = "days_expected"
        }
    }

    /// One rule across the cohort.
    public struct RuleSummary: Sendable, Hashable, Codable {
        /// The rule's id.
        package var ruleID: String
        /// The rule's description from the protocol.
        public var description: String
        /// Minimum records per day.
        package var minPerDay: Int
        /// Compliance threshold (0…1).
        public var threshold: Double
        /// The record kinds that count, sorted.
        public var kinds: [RecordKind]
        /// Participants in the report.
        public var participants: Int
        /// Participants whose rate is N/A (nothing counted yet).
        package var notApplicable: Int
        /// Participants whose rate is at or above the threshold.
        package var compliantCount: Int
        /// Mean rate over participants with a rate; nil when none has one.
        package var meanRate: Double?
        /// Median rate over participants with a rate; nil when none has one.
        package var medianRate: Double?
        /// `compliantCount` / participants with a rate; nil when none has one.
        package var shareCompliant: Double?

        /// Creates a rule summary.
        package init(
            ruleID: String, description: String, minPerDay: Int, threshold: Double, kinds: [RecordKind], participants: Int,
            notApplicable: Int, compliantCount: Int, meanRate: Double?, medianRate: Double?, shareCompliant: Double?
        ) {
            self.ruleID = ruleID
            self.description = description
            self.minPerDay = minPerDay
            self.threshold = threshold
            self.kinds = kinds
            self.participants = participants
            self.notApplicable = notApplicable
            self.compliantCount = compliantCount
            self.meanRate = meanRate
            self.medianRate = medianRate
            self.shareCompliant = shareCompliant
        }

        enum CodingKeys: String, CodingKey {
            case description, threshold, kinds, participants
            case ruleID = "rule_id"
            case minPerDay = "min_per_day"
            case notApplicable = "not_applicable"
            case compliantCount = "compliant_count"
            case meanRate = "mean_rate"
            case medianRate = "median_rate"
            case shareCompliant = "share_compliant"
        }

        /// Encodes absent statistics as explicit nulls, so every summary has the same keys.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(ruleID, forKey: .ruleID)
            try c.encode(description, forKey: .description)
            try c.encode(minPerDay, forKey: .minPerDay)
            try c.encode(threshold, forKey: .threshold)
            try c.encode(kinds, forKey: .kinds)
            try c.encode(participants, forKey: .participants)
            try c.encode(notApplicable, forKey: .notApplicable)
            try c.encode(compliantCount, forKey: .compliantCount)
            try c.encode(meanRate, forKey: .meanRate)
            try c.encode(medianRate, forKey: .medianRate)
            try c.encode(shareCompliant, forKey: .shareCompliant)
        }
    }

    /// A participant to remind, with every rule they should hear about.
    ///
    /// Only ongoing participants are reminded (active, not withdrawn, study not over): a
    /// reminder to someone who withdrew or finished cannot help and may be unwelcome.
    public struct Reminder: Sendable, Hashable, Codable {
        /// Internal id.
        package var participantID: UUID
        /// Study code (`P-0007`).
        public var code: String
        /// The participant's last fully closed day (local), the day "yesterday" refers to.
        package var lastClosedDay: CivilDate
        /// The rules that triggered the reminder.
        package var rules: [Item]

        /// Creates a reminder.
        package init(participantID: UUID, code: String, lastClosedDay: CivilDate, rules: [Item]) {
            self.participantID = participantID
            self.code = code
            self.lastClosedDay = lastClosedDay
            self.rules = rules
        }

        /// One rule that triggered a reminder.
        package struct Item: Sendable, Hashable, Codable {
            /// The rule's id.
            package var ruleID: String
            /// The rule's description from the protocol (what to do).
            public var description: String
            /// The participant's rate (never nil here: N/A participants are not reminded).
            public var rate: Double
            /// The rule's threshold.
            public var threshold: Double
            /// Counted days not meeting the rule.
            package var daysMissed: Int
            /// Counted days.
            package var daysExpected: Int
            /// Whether the rate is below the threshold.
            package var belowThreshold: Bool
            /// Whether the last closed day did not meet the rule.
            package var missedLastClosedDay: Bool

            /// Creates a reminder item.
            package init(
                ruleID: String, description: String, rate: Double, threshold: Double, daysMissed: Int, daysExpected: Int,
                belowThreshold: Bool, missedLastClosedDay: Bool
            ) {
                self.ruleID = ruleID
                self.description = description
                self.rate = rate
                self.threshold = threshold
                self.daysMissed = daysMissed
                self.daysExpected = daysExpected
                self.belowThreshold = belowThreshold
                self.missedLastClosedDay = missedLastClosedDay
            }

            enum CodingKeys: String, CodingKey {
                case description, rate, threshold
                case ruleID = "rule_id"
                case daysMissed = "days_missed"
                case daysExpected = "days_expected"
                case belowThreshold = "below_threshold"
                case missedLastClosedDay = "missed_last_closed_day"
            }
        }

        enum CodingKeys: String, CodingKey {
            case code, rules
            case participantID = "participant_id"
            case lastClosedDay = "last_closed_day"
        }
    }
}

extension ComplianceReport {
    /// The report as pretty, key-sorted JSON (what `--format json` prints and exports store).
    public func jsonData() throws -> Data { try CanonicalJSON.pretty(self) }

    /// Parses a `--below` argument: a fraction (`0.8`) or a percentage (`80%`), within 0…1.
    package static func parseRate(_ text: String) throws -> Double {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let isPercent = trimmed.hasSuffix("%")
        let number = isPercent ? trimmed.dropLast().trimmingCharacters(in: .whitespaces) : trimmed
        guard let value = Double(number), value.isFinite else {
            throw CohortError.invalid(
                "the rate is not a number", field: "below", hint: "give a fraction such as 0.8 or a percentage such as 80%")
        }
        let rate = isPercent ? value / 100 : value
        guard (0...1).contains(rate) else {
            throw CohortError.invalid(
                "the rate is outside 0 to 1 (0% to 100%)", field: "below", hint: "give a fraction such as 0.8 or a percentage such as 80%")
        }
        return rate
    }

    /// Keeps only participants with at least one rule whose rate is below `rate` (N/A rates
    /// never match), and the reminders of those participants. Rule summaries stay cohort-wide.
    public func filtered(below rate: Double) -> ComplianceReport {
        var copy = self
        copy.participants = participants.filter { entry in
            entry.rules.contains { result in result.rate.map { $0 < rate } ?? false }
        }
        let kept = Set(copy.participants.compactMap(\.participantID))
        copy.reminders = reminders.filter { kept.contains($0.participantID) }
        return copy
    }

    /// The report as it may go into an export: participants are named by `pseudonym(id)`
    /// (return nil to leave a participant out, e.g. one excluded from exports); internal ids,
    /// codes, time zones and calendar dates are removed, reminders dropped, and the rule
    /// summaries recomputed over the participants left in.
    package func forExport(pseudonym: (UUID) -> String?) -> ComplianceReport {
        var copy = self
        copy.reminders = []
        copy.participants = participants.compactMap { entry in
            guard let id = entry.participantID, let label = pseudonym(id) else { return nil }
            var out = entry
            out.participantID = nil
            out.code = nil
            out.pseudonym = label
            out.timeZone = nil
            out.enrolledOn = nil
            out.lastCountedDay = nil
            out.rules = entry.rules.map { result in
                var r = result
                r.weeks = result.weeks.map { WeekResult(week: $0.week, startsOn: nil, daysMet: $0.daysMet, daysExpected: $0.daysExpected) }
                return r
            }
            return out
        }
        for index in copy.rules.indices { copy.rules[index].recompute(from: copy.participants) }
        return copy
    }
}
