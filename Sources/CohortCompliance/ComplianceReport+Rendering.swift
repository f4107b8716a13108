import CohortCore
import Foundation

extension ComplianceReport {
    /// Participant results for `--format csv`: a header, then one row per participant and rule.
    ///
    /// Columns: `participant` (code, or pseudonym in the export form), `participant_id`,
    /// `status`, `rule`, `days_met`, `days_expected`, `rate` (fraction with 4 decimals, `NA`
    /// when not applicable), `compliant` (`true`/`false`/`NA`), `missed_last_closed_day`,
    /// `weeks` (`met/expected` per study week, separated by `;`).
    public func csvRows() -> [[String]] {
        var rows = [
            [
                "participant", "participant_id", "status", "rule", "days_met", "days_expected", "rate", "compliant",
                "missed_last_closed_day", "weeks",
            ]
        ]
        for entry in participants {
            for result in entry.rules {
                rows.append([
                    entry.label, entry.participantID?.uuidString ?? "", entry.status.rawValue, result.ruleID,
                    String(result.daysMet), String(result.daysExpected), result.rate.map { Self.decimal($0) } ?? "NA",
                    result.compliant.map { String($0) } ?? "NA", String(result.missedLastClosedDay),
                    result.weeks.map { "\($0.daysMet)/\($0.daysExpected)" }.joined(separator: ";"),
                ])
            }
        }
        return rows
    }

    /// Rule summaries as CSV rows: a header, then one row per rule.
    package func summaryCSVRows() -> [[String]] {
        var rows = [
            [
                "rule", "threshold", "min_per_day", "participants", "not_applicable", "compliant", "share_compliant", "mean_rate",
                "median_rate",
            ]
        ]
        for s in rules {
            rows.append([
                s.ruleID, Self.decimal(s.threshold), String(s.minPerDay), String(s.participants), String(s.notApplicable),
                String(s.compliantCount), s.shareCompliant.map { Self.decimal($0) } ?? "NA", s.meanRate.map { Self.decimal($0) } ?? "NA",
                s.medianRate.map { Self.decimal($0) } ?? "NA",
            ])
        }
        return rows
    }

    /// Reminders as CSV rows: a header, then one row per participant and triggering rule.
    package func reminderCSVRows() -> [[String]] {
        var rows = [["participant", "participant_id", "rule", "rate", "threshold", "days_missed", "days_expected", "below_threshold", "missed_last_closed_day"]]
        for reminder in reminders {
            for item in reminder.rules {
                rows.append([
                    reminder.code, reminder.participantID.uuidString, item.ruleID, Self.decimal(item.rate),
                    Self.decimal(item.threshold), String(item.daysMissed), String(item.daysExpected), String(item.belowThreshold),
                    String(item.missedLastClosedDay),
                ])
            }
        }
        return rows
    }

    /// Participant results for `--format table`.
    package func participantTable() -> TextTable {
        var table = TextTable(
            header: ["participant", "status", "rule", "met/expected", "rate", "compliant", "missed last day", "weeks"],
            alignments: [.left, .left, .left, .right, .right, .left, .left, .left])
        for entry in participants {
            for result in entry.rules {
                table.append([
                    entry.label, entry.status.rawValue, result.ruleID, "\(result.daysMet)/\(result.daysExpected)",
                    result.rate.map { Self.percent($0) } ?? "N/A", result.compliant.map { $0 ? "yes" : "no" } ?? "N/A",
                    result.daysExpected > 0 ? (result.missedLastClosedDay ? "yes" : "no") : "-",
                    result.weeks.map { "\($0.daysMet)/\($0.daysExpected)" }.joined(separator: " "),
                ])
            }
        }
        return table
    }

    /// The cohort summary per rule for `--format table`.
    package func summaryTable() -> TextTable {
        var table = TextTable(
            header: ["rule", "threshold", "participants", "N/A", "compliant", "share compliant", "mean", "median"],
            alignments: [.left, .right, .right, .right, .right, .right, .right, .right])
        for s in rules {
            table.append([
                s.ruleID, Self.percent(s.threshold), String(s.participants), String(s.notApplicable), String(s.compliantCount),
                s.shareCompliant.map { Self.percent($0) } ?? "N/A", s.meanRate.map { Self.percent($0) } ?? "N/A",
                s.medianRate.map { Self.percent($0) } ?? "N/A",
            ])
        }
        return table
    }

    /// Reminders as `cohort reminders` prints them (a table).
    package func reminderTable() -> TextTable {
        var table = TextTable(
            header: ["participant", "rule", "rate", "threshold", "days missed", "below threshold", "missed last day"],
            alignments: [.left, .left, .right, .right, .right, .left, .left])
        for reminder in reminders {
            for item in reminder.rules {
                table.append([
                    reminder.code, item.ruleID, Self.percent(item.rate), Self.percent(item.threshold),
                    "\(item.daysMissed)/\(item.daysExpected)", item.belowThreshold ? "yes" : "no", item.missedLastClosedDay ? "yes" : "no",
                ])
            }
        }
        return table
    }

    /// The whole report as text: participants, then the cohort summary.
    public func tableText() -> String {
        "Compliance as of \(asOf.iso8601) (study \(studyID), revision \(protocolRevision))\n\n" + participantTable().render()
            + "\nCohort summary\n\n" + summaryTable().render()
    }

    /// `0.8571` style: 4 decimals, no exponent, `.` as separator (locale independent).
    static func decimal(_ value: Double) -> String {
        let scaled = (value * 10_000).rounded()
        let negative = scaled < 0
        let magnitude = Int(abs(scaled))
        let text = "\(magnitude / 10_000).\(CivilDateFormatting.pad(magnitude % 10_000, 4))"
        return negative ? "-" + text : text
    }

    /// `85.7 %` style: one decimal.
    static func percent(_ value: Double) -> String {
        let tenths = Int((value * 1000).rounded())
        return "\(tenths / 10).\(abs(tenths % 10)) %"
    }
}

/// Zero padding without Foundation formatters (locale independent).
enum CivilDateFormatting {
    static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
