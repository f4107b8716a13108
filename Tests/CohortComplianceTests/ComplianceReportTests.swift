import CohortCore
import Foundation
import Testing

@testable import CohortCompliance

struct ComplianceReportTests {
    /// Two participants: one with 3 of 4 days, one enrolled on the as-of day (N/A).
    func sampleReport() throws -> (ComplianceReport, ComplianceSubject, ComplianceSubject) {
        var engine = ComplianceEngine(
            studyProtocol: Fixture.studyProtocol(rules: [Fixture.dailySymptoms]), asOf: try Fixture.at("2025-01-05 12:00", "UTC").date)
        let a = try Fixture.subject("P-0001", zone: "Europe/Berlin", enrolled: "2025-01-01")
        let b = try Fixture.subject("P-0002", zone: "UTC", enrolled: "2025-01-05")
        try engine.add(participant: a)
        try engine.add(participant: b)
        for day in ["2025-01-01", "2025-01-02", "2025-01-04"] {
            engine.add(recordOf: a.id, kind: .pain, start: try Fixture.at("\(day) 10:00", "Europe/Berlin"))
        }
        return (engine.report(), a, b)
    }

    @Test func jsonUsesSnakeCaseKeysAndExplicitNullForNotApplicable() throws {
        let (report, a, _) = try sampleReport()
        let object = try #require(try JSONSerialization.jsonObject(with: report.jsonData()) as? [String: Any])
        #expect(object["study_id"] as? String == "axspa-test")
        #expect(object["protocol_revision"] as? Int == 3)
        #expect(object["as_of"] as? String == "2025-01-05T12:00:00Z")
        #expect(object["schema"] as? String == "cohort/compliance-report@1")
        let participants = try #require(object["participants"] as? [[String: Any]])
        #expect(participants.first?["participant_id"] as? String == a.id.uuidString)
        #expect(participants.first?["enrolled_on"] as? String == "2025-01-01")
        #expect(participants.first?["window_end"] as? String == "last_closed_day")
        let firstRule = try #require((participants.first?["rules"] as? [[String: Any]])?.first)
        #expect(firstRule["days_met"] as? Int == 3)
        #expect(firstRule["days_expected"] as? Int == 4)
        #expect(firstRule["missed_last_closed_day"] as? Bool == false)
        let naRule = try #require((participants.last?["rules"] as? [[String: Any]])?.first)
        #expect(naRule["rate"] is NSNull)
        #expect(naRule["compliant"] is NSNull)
        let summary = try #require((object["rules"] as? [[String: Any]])?.first)
        #expect(summary["not_applicable"] as? Int == 1)
        #expect(summary["share_compliant"] as? Double == 0)
    }

    @Test func jsonRoundTrips() throws {
        let (report, _, _) = try sampleReport()
        let decoded = try JSONDecoder().decode(ComplianceReport.self, from: try report.jsonData())
        #expect(decoded == report)
    }

    @Test func csvHasOneRowPerParticipantAndRuleWithNAForNotApplicable() throws {
        let (report, a, _) = try sampleReport()
        let rows = report.csvRows()
        #expect(rows.count == 3)
        #expect(rows[0] == ["participant", "participant_id", "status", "rule", "days_met", "days_expected", "rate", "compliant", "missed_last_closed_day", "weeks"])
        #expect(rows[1] == ["P-0001", a.id.uuidString, "active", "daily-symptoms", "3", "4", "0.7500", "false", "false", "3/4"])
        #expect(rows[2][6] == "NA" && rows[2][7] == "NA")
        #expect(report.summaryCSVRows()[1] == ["daily-symptoms", "0.8000", "1", "2", "1", "0", "0.0000", "0.7500", "0.7500"])
    }

    @Test func tableShowsNotApplicableAndPercentages() throws {
        let (report, _, _) = try sampleReport()
        let text = report.participantTable().render()
        #expect(text.contains("75.0 %"))
        #expect(text.contains("N/A"))
        #expect(report.tableText().contains("Cohort summary"))
        let lines = text.split(separator: "\n")
        #expect(lines.count == 4)
    }

    @Test func belowFilterKeepsParticipantsWithARateBelowAndNeverNotApplicable() throws {
        let (report, a, _) = try sampleReport()
        #expect(report.filtered(below: 0.8).participants.map(\.participantID) == [a.id])
        #expect(report.filtered(below: 0.75).participants.isEmpty)
        #expect(report.filtered(below: 1.0).reminders.map(\.participantID) == [a.id])
        #expect(report.filtered(below: 0.8).rules == report.rules)
    }

    @Test(arguments: [("80%", 0.8), ("0.8", 0.8), ("100 %", 1.0), (" 0 ", 0.0)])
    func parsesRates(text: String, value: Double) throws {
        #expect(abs(try ComplianceReport.parseRate(text) - value) < 1e-12)
    }

    @Test(arguments: ["1.5", "abc", "-0.1", "120%", ""])
    func rejectsRatesOutsideZeroToOne(text: String) {
        #expect(throws: CohortError.self) { try ComplianceReport.parseRate(text) }
    }

    @Test func exportFormCarriesPseudonymsOnlyAndRecomputesSummaries() throws {
        let (report, a, _) = try sampleReport()
        let exported = report.forExport { $0 == a.id ? "PSEUDO-A" : nil }
        #expect(exported.participants.count == 1)
        #expect(exported.reminders.isEmpty)
        let entry = try #require(exported.participants.first)
        #expect(entry.pseudonym == "PSEUDO-A" && entry.code == nil && entry.participantID == nil)
        #expect(entry.enrolledOn == nil && entry.timeZone == nil && entry.lastCountedDay == nil)
        #expect(entry.rules.first?.weeks.allSatisfy { $0.startsOn == nil } == true)
        #expect(exported.rules.first?.participants == 1)
        #expect(exported.rules.first?.notApplicable == 0)
        let json = try #require(String(data: try exported.jsonData(), encoding: .utf8))
        #expect(!json.contains("P-0001"))
        #expect(!json.contains(a.id.uuidString))
        #expect(!json.contains("2025-01-01"))
        #expect(exported.csvRows()[1][0] == "PSEUDO-A")
    }

    @Test func reminderRowsListEachTriggeringRule() throws {
        let (report, _, _) = try sampleReport()
        let rows = report.reminderCSVRows()
        #expect(rows.count == 2)
        #expect(rows[1][0] == "P-0001" && rows[1][2] == "daily-symptoms" && rows[1][5] == "1" && rows[1][7] == "true")
        #expect(report.reminderTable().render().contains("P-0001"))
    }
}
