package import CohortCore

/// What a policy's published times still let an attacker with public calendars and weather
/// archives learn about a participant's date shift (docs/deidentification.md, "Time"): stated in
/// the de-identification report and checked by `cohort deid risk`.
package enum TimeSignals {
    /// One recoverable signal.
    package struct Signal: Sendable, Hashable {
        /// The attack it feeds (`holiday`, `freshness`, `exogenous`, `dst`).
        public var attack: String
        /// What is recoverable and why, in one sentence (no value, no identifier).
        public var statement: String
    }

    /// The signals `studyProtocol`'s policy leaves, given the data types it collects.
    package static func recoverable(_ studyProtocol: StudyProtocol) -> [Signal] {
        let policy = studyProtocol.deidentification
        let shift = policy.dateShift
        guard shift.maxDays > 0, publishesShiftedTimes(policy) else { return [] }
        var result: [Signal] = []
        if !shift.maskHolidays {
            result.append(
                Signal(
                    attack: "holiday",
                    statement: shift.wholeWeeks
                        ? "whole-week shifts keep weekdays and holidays are not masked: dips of a daily activity series on public holidays align with the regional holiday calendar and give the shift away"
                        : "holidays are not masked: dips of a daily activity series on public holidays, compared with the same weekday of nearby weeks, align with the regional holiday calendar and give the shift away"))
        }
        if shift.embargoDays < shift.maxDays {
            result.append(
                Signal(
                    attack: "freshness",
                    statement: "embargo_days is below max_days: the last published record of a participant with data up to the export gives the shift away when it is earlier than the embargo horizon, and bounds it otherwise"))
        }
        result.append(
            Signal(
                attack: "study-start",
                statement: "the study start bounds shifts from above: a participant's real first record is on or after it, so an adversary who knows the start date narrows the shifts of early enrollees with deep shifts (not in the files; not attacked)"))
        if shift.exogenous == .dated, studyProtocol.dataTypes.values.joined().contains(where: shift.isExogenous) {
            result.append(
                Signal(
                    attack: "exogenous",
                    statement: "exogenous series (the weather) are published with shifted dates: matched against a public archive they give the shift and the place away"))
        }
        return result
    }

    /// Whether any record time, enrollment, signing or withdrawal is published shifted.
    static func publishesShiftedTimes(_ policy: DeidentificationPolicy) -> Bool {
        let tables = ["participant", "consent"] + DataType.allCases.map(\.rawValue)
        return tables.contains { table in
            ["start", "end", "enrolled_on", "signed_at"].contains { policy.rule(table: table, field: $0)?.transform == .shift }
        }
    }
}
