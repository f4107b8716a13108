import CohortCore
import Foundation
import Testing

@testable import CohortCompliance

struct ComplianceEngineTests {
    /// Runs the engine for one subject with records given as local wall-clock times.
    func run(
        _ subject: ComplianceSubject, asOf: String, records: [(RecordKind, String)], studyProtocol: StudyProtocol = Fixture.studyProtocol()
    ) throws -> ComplianceReport.ParticipantCompliance {
        var engine = ComplianceEngine(studyProtocol: studyProtocol, asOf: try Fixture.at(asOf, subject.timeZone).date)
        try engine.add(participant: subject)
        for (kind, time) in records { engine.add(recordOf: subject.id, kind: kind, start: try Fixture.at(time, subject.timeZone)) }
        return try #require(engine.report().participants.first)
    }

    @Test(arguments: ["Europe/Berlin", "America/New_York", "Asia/Kolkata", "Pacific/Auckland"])
    func entriesJustBeforeAndAfterLocalMidnightCountOnTheirLocalDay(zone: String) throws {
        let subject = try Fixture.subject(zone: zone, enrolled: "2025-06-10")
        let entry = try run(
            subject, asOf: "2025-06-13 12:00", records: [(.pain, "2025-06-10 23:59"), (.pain, "2025-06-12 00:01")])
        let result = try #require(entry.result(for: "daily-symptoms"))
        #expect(result.daysExpected == 3)
        #expect(result.daysMet == 2)
        // 06-11 is the only day without an entry: had either entry drifted by its UTC offset, it would land there.
        #expect(result.missedLastClosedDay == false)
        #expect(result.weeks == [.init(week: 1, startsOn: try Fixture.day("2025-06-10"), daysMet: 2, daysExpected: 3)])
    }

    @Test(arguments: [
        ("Europe/Berlin", "2025-03-30"), ("Europe/Berlin", "2025-10-26"),
        ("America/New_York", "2025-03-09"), ("America/New_York", "2025-11-02"),
        ("Pacific/Auckland", "2025-04-06"), ("Pacific/Auckland", "2025-09-28"),
    ])
    func aDaylightSavingChangeDayCountsAsOneDay(zone: String, transition: String) throws {
        let t = try Fixture.day(transition)
        let subject = try Fixture.subject(zone: zone, enrolled: t.adding(days: -1).description)
        let entry = try run(
            subject, asOf: "\(t.adding(days: 2)) 12:00",
            records: [
                (.steps, "\(t) 00:30"), (.steps, "\(t) 23:30"), (.steps, "\(t.adding(days: 1)) 00:30"),
                (.pain, "\(t) 00:30"), (.pain, "\(t.adding(days: 1)) 23:30"),
            ])
        let symptoms = try #require(entry.result(for: "daily-symptoms"))
        let steps = try #require(entry.result(for: "steps-twice"))
        #expect(symptoms.daysExpected == 3)
        #expect(symptoms.daysMet == 2)
        #expect(symptoms.missedLastClosedDay == false)
        // Both step syncs of the 23- or 25-hour day fall on that one day; the next day has one.
        #expect(steps.daysMet == 1)
        #expect(steps.missedLastClosedDay == true)
        #expect(entry.lastCountedDay == t.adding(days: 1))
    }

    @Test func enrolledTodayIsNotApplicableNotFullCompliance() throws {
        let subject = try Fixture.subject(enrolled: "2025-05-05")
        let entry = try run(subject, asOf: "2025-05-05 21:00", records: [(.pain, "2025-05-05 09:00")])
        let result = try #require(entry.result(for: "daily-symptoms"))
        #expect(result.daysExpected == 0)
        #expect(result.rate == nil)
        #expect(result.compliant == nil)
        #expect(result.missedLastClosedDay == false)
        #expect(result.weeks.isEmpty)
        #expect(entry.lastCountedDay == nil)
    }

    @Test func theCurrentOpenDayNeverCounts() throws {
        let subject = try Fixture.subject(enrolled: "2025-05-05")
        let entry = try run(subject, asOf: "2025-05-07 23:59", records: [(.pain, "2025-05-07 08:00")])
        let result = try #require(entry.result(for: "daily-symptoms"))
        #expect(result.daysExpected == 2)
        #expect(result.daysMet == 0)
        #expect(entry.windowEnd == .lastClosedDay)
    }

    @Test(arguments: [
        (4, 5, 0.8, true), (3, 5, 0.6, true), (3, 5, 0.600_001, false), (7, 10, 0.7, true), (69, 100, 0.7, false), (0, 3, 0.0, true),
    ])
    func compliantMeansRateAtOrAboveThreshold(met: Int, expected: Int, threshold: Double, compliant: Bool) throws {
        let rule = ComplianceRule(id: "r", description: "d", dataType: nil, kinds: [.pain], minPerDay: 1, threshold: threshold)
        let studyProtocol = Fixture.studyProtocol(durationDays: expected, rules: [rule])
        let subject = try Fixture.subject(zone: "UTC", enrolled: "2025-01-01")
        let start = try Fixture.day("2025-01-01")
        let records = (0..<met).map { (RecordKind.pain, "\(start.adding(days: $0)) 10:00") }
        let entry = try run(subject, asOf: "2025-12-31 10:00", records: records, studyProtocol: studyProtocol)
        let result = try #require(entry.result(for: "r"))
        #expect(result.daysExpected == expected)
        #expect(result.daysMet == met)
        #expect(result.compliant == compliant)
    }

    @Test func withdrawalStopsTheDenominatorBeforeTheWithdrawalDay() throws {
        let withdrawnAt = try Fixture.at("2025-04-06 10:00", "Europe/Berlin")
        let subject = try Fixture.subject(enrolled: "2025-04-01", withdrawnAt: withdrawnAt, status: .stopped)
        let entry = try run(
            subject, asOf: "2025-04-20 12:00",
            records: [(.pain, "2025-04-01 08:00"), (.pain, "2025-04-05 22:00"), (.pain, "2025-04-06 08:00"), (.pain, "2025-04-07 08:00")])
        let result = try #require(entry.result(for: "daily-symptoms"))
        #expect(result.daysExpected == 5)  // 04-01 … 04-05; the withdrawal day is partial
        #expect(result.daysMet == 2)
        #expect(entry.windowEnd == .withdrawal)
        #expect(entry.lastCountedDay == (try Fixture.day("2025-04-05")))
        #expect(entry.ongoing == false)
    }

    @Test func duplicateEntriesCountOnceTowardsTheDayButSeparatelyTowardsMinPerDay() throws {
        let subject = try Fixture.subject(enrolled: "2025-02-01")
        let entry = try run(
            subject, asOf: "2025-02-03 12:00",
            records: [(.pain, "2025-02-01 09:00"), (.pain, "2025-02-01 09:00"), (.steps, "2025-02-01 10:00"), (.steps, "2025-02-01 10:00")])
        #expect(entry.result(for: "daily-symptoms")?.daysMet == 1)
        #expect(entry.result(for: "steps-twice")?.daysMet == 1)
        #expect(entry.result(for: "daily-symptoms")?.daysExpected == 2)
    }

    @Test func entriesBeforeEnrollmentDoNotCount() throws {
        let subject = try Fixture.subject(enrolled: "2025-02-01")
        let entry = try run(
            subject, asOf: "2025-02-03 12:00", records: [(.pain, "2025-01-31 23:59"), (.pain, "2025-01-20 12:00")])
        #expect(entry.result(for: "daily-symptoms")?.daysMet == 0)
        #expect(entry.result(for: "daily-symptoms")?.daysExpected == 2)
    }

    @Test func studyEndCapsTheDenominator() throws {
        let subject = try Fixture.subject(enrolled: "2025-02-01")
        let studyProtocol = Fixture.studyProtocol(durationDays: 7)
        let entry = try run(
            subject, asOf: "2025-03-15 12:00", records: [(.pain, "2025-02-07 20:00"), (.pain, "2025-02-08 08:00")],
            studyProtocol: studyProtocol)
        let result = try #require(entry.result(for: "daily-symptoms"))
        #expect(result.daysExpected == 7)
        #expect(result.daysMet == 1)
        #expect(entry.windowEnd == .studyEnd)
        #expect(entry.ongoing == false)
    }

    @Test func weeklyBreakdownSumsToTotals() throws {
        let subject = try Fixture.subject(zone: "America/New_York", enrolled: "2025-03-01")
        let start = try Fixture.day("2025-03-01")
        let metOffsets = [0, 1, 2, 5, 7, 8, 13, 14, 15, 16]
        let entry = try run(
            subject, asOf: "2025-03-18 09:00", records: metOffsets.map { (.fatigue, "\(start.adding(days: $0)) 19:00") })
        let result = try #require(entry.result(for: "daily-symptoms"))
        #expect(result.daysExpected == 17)
        #expect(result.daysMet == metOffsets.count)
        #expect(result.weeks.map(\.daysExpected) == [7, 7, 3])
        #expect(result.weeks.map(\.daysMet) == [4, 3, 3])
        #expect(result.weeks.map(\.startsOn) == [start, start.adding(days: 7), start.adding(days: 14)])
        #expect(result.weeks.map(\.daysMet).reduce(0, +) == result.daysMet)
        #expect(result.weeks.map(\.daysExpected).reduce(0, +) == result.daysExpected)
    }

    @Test func summaryHasMeanMedianShareAndNotApplicableCount() throws {
        let rule = ComplianceRule(id: "r", description: "d", dataType: nil, kinds: [.pain], minPerDay: 1, threshold: 0.5)
        let studyProtocol = Fixture.studyProtocol(durationDays: 4, rules: [rule])
        var engine = ComplianceEngine(studyProtocol: studyProtocol, asOf: try Fixture.at("2025-01-10 12:00", "UTC").date)
        let metDays = [4, 2, 1]
        for (index, met) in metDays.enumerated() {
            let subject = try Fixture.subject("P-000\(index)", zone: "UTC", enrolled: "2025-01-01")
            try engine.add(participant: subject)
            for day in 0..<met { engine.add(recordOf: subject.id, kind: .pain, start: try Fixture.at("2025-01-0\(day + 1) 08:00", "UTC")) }
        }
        try engine.add(participant: try Fixture.subject("P-0009", zone: "UTC", enrolled: "2025-01-10"))
        let summary = try #require(engine.report().rules.first)
        #expect(summary.participants == 4)
        #expect(summary.notApplicable == 1)
        #expect(summary.compliantCount == 2)
        #expect(summary.meanRate == (1.0 + 0.5 + 0.25) / 3)
        #expect(summary.medianRate == 0.5)
        #expect(summary.shareCompliant == 2.0 / 3.0)
        #expect(summary.kinds == [.pain])
    }

    @Test func medianOfAnEvenCountIsTheMeanOfTheMiddleTwo() throws {
        let rule = ComplianceRule(id: "r", description: "d", dataType: nil, kinds: [.pain], minPerDay: 1, threshold: 0.9)
        var engine = ComplianceEngine(
            studyProtocol: Fixture.studyProtocol(durationDays: 4, rules: [rule]), asOf: try Fixture.at("2025-01-10 12:00", "UTC").date)
        for met in [0, 1, 3, 4] {
            let subject = try Fixture.subject("P-\(met)", zone: "UTC", enrolled: "2025-01-01")
            try engine.add(participant: subject)
            for day in 0..<met { engine.add(recordOf: subject.id, kind: .pain, start: try Fixture.at("2025-01-0\(day + 1) 08:00", "UTC")) }
        }
        let summary = try #require(engine.report().rules.first)
        #expect(summary.medianRate == 0.5)
        #expect(summary.shareCompliant == 0.25)
    }

    @Test func allNotApplicableLeavesSummaryStatisticsEmpty() throws {
        var engine = ComplianceEngine(studyProtocol: Fixture.studyProtocol(), asOf: try Fixture.at("2025-01-10 12:00", "UTC").date)
        try engine.add(participant: try Fixture.subject(zone: "UTC", enrolled: "2025-01-10"))
        let summary = try #require(engine.report().rules.first)
        #expect(summary.notApplicable == 1)
        #expect(summary.meanRate == nil && summary.medianRate == nil && summary.shareCompliant == nil)
    }

    @Test func unknownTimeZoneErrorNamesTheParticipantCode() throws {
        var engine = ComplianceEngine(studyProtocol: Fixture.studyProtocol(), asOf: Date(timeIntervalSince1970: 1_750_000_000))
        let subject = try Fixture.subject("P-0042", zone: "Europe/Atlantis", enrolled: "2025-01-01")
        let error = try #require(throws: CohortError.self) { try engine.add(participant: subject) }
        #expect(error.code == .invalidInput)
        #expect(error.message.contains("P-0042"))
        #expect(error.location?.field == "time_zone")
    }

    @Test func addingAParticipantTwiceIsAConflict() throws {
        var engine = ComplianceEngine(studyProtocol: Fixture.studyProtocol(), asOf: Date(timeIntervalSince1970: 1_750_000_000))
        let subject = try Fixture.subject(enrolled: "2025-01-01")
        try engine.add(participant: subject)
        let error = try #require(throws: CohortError.self) { try engine.add(participant: subject) }
        #expect(error.code == .conflict)
    }

    @Test func recordsOfUnknownParticipantsAreTalliedAndUncountedKindsIgnored() throws {
        var engine = ComplianceEngine(studyProtocol: Fixture.studyProtocol(), asOf: try Fixture.at("2025-01-05 12:00", "UTC").date)
        let subject = try Fixture.subject(zone: "UTC", enrolled: "2025-01-01")
        try engine.add(participant: subject)
        engine.add(recordOf: UUID(), kind: .pain, start: try Fixture.at("2025-01-02 08:00", "UTC"))
        engine.add(recordOf: subject.id, kind: .heartRate, start: try Fixture.at("2025-01-02 08:00", "UTC"))
        let report = engine.report()
        #expect(report.unmatchedRecords == 1)
        #expect(report.participants.first?.rules.allSatisfy { $0.daysMet == 0 } == true)
    }

    @Test func remindersListOngoingParticipantsBelowThresholdOrMissingYesterday() throws {
        let asOf = "2025-01-11 12:00"
        var engine = ComplianceEngine(
            studyProtocol: Fixture.studyProtocol(rules: [Fixture.dailySymptoms]), asOf: try Fixture.at(asOf, "UTC").date)
        func log(_ subject: ComplianceSubject, days: [Int]) throws {
            let start = try Fixture.day("2025-01-01")
            for day in days { engine.add(recordOf: subject.id, kind: .pain, start: try Fixture.at("\(start.adding(days: day - 1)) 08:00", "UTC")) }
        }
        let perfect = try Fixture.subject("P-0001", zone: "UTC", enrolled: "2025-01-01")
        let missedYesterday = try Fixture.subject("P-0002", zone: "UTC", enrolled: "2025-01-01")
        let low = try Fixture.subject("P-0003", zone: "UTC", enrolled: "2025-01-01")
        let withdrawn = try Fixture.subject(
            "P-0004", zone: "UTC", enrolled: "2025-01-01", withdrawnAt: try Fixture.at("2025-01-06 08:00", "UTC"), status: .stopped)
        let newcomer = try Fixture.subject("P-0005", zone: "UTC", enrolled: "2025-01-11")
        for subject in [perfect, missedYesterday, low, withdrawn, newcomer] { try engine.add(participant: subject) }
        try log(perfect, days: Array(1...10))
        try log(missedYesterday, days: Array(1...9))
        try log(low, days: [1, 2, 10])
        let report = engine.report()
        #expect(report.reminders.map(\.code) == ["P-0002", "P-0003"])
        let yesterday = try #require(report.reminders.first?.rules.first)
        #expect(yesterday.missedLastClosedDay && !yesterday.belowThreshold)
        #expect(yesterday.daysMissed == 1 && yesterday.daysExpected == 10 && yesterday.rate == 0.9)
        #expect(report.reminders.first?.lastClosedDay == (try Fixture.day("2025-01-10")))
        let below = try #require(report.reminders.last?.rules.first)
        #expect(below.belowThreshold && !below.missedLastClosedDay)
        #expect(below.daysMissed == 7 && below.rate == 0.3)
    }
}
