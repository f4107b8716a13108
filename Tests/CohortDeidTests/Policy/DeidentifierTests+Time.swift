import CohortCore
import Foundation
import Testing

@testable import CohortDeid

/// Issue 27: the embargo (no published date after the creation minus `embargo_days`) and
/// exogenous series (the weather) left out by default.
extension DeidentifierTests {
    static let created = Timestamp(epochMilliseconds: 1_740_830_400_000)  // 2025-03-01T12:00:00Z

    func deidentifier(_ dateShift: DeidentificationPolicy.DateShift, dataTypes: [DataType: [RecordKind]]? = nil) throws -> Deidentifier {
        let studyProtocol =
            dataTypes.map { Fixtures.studyProtocol(dateShift: dateShift, dataTypes: $0) } ?? Fixtures.studyProtocol(dateShift: dateShift)
        return try Deidentifier(
            studyProtocol: studyProtocol, recipient: "analyst", recipientKey: Fixtures.key, shiftKey: Fixtures.key,
            roster: PlantedRoster.participants, referenceDate: Self.created.localDate, createdAt: Self.created)
    }

    @Test func nothingIsPublishedAfterTheEmbargoHorizon() throws {
        var deid = try deidentifier(.init(maxDays: 180, wholeWeeks: false, embargoDays: 90))
        #expect(deid.horizon.epochMilliseconds == Self.created.epochMilliseconds - 90 * 86_400_000)
        let p = PlantedRoster.participants[0]
        let days = Int64(-deid.shifter.offset(for: p.id))
        // Real instants placed so that, shifted, they land an hour before and an hour after the horizon.
        func real(_ publishedMs: Int64) -> Timestamp { Timestamp(epochMilliseconds: publishedMs + days * 86_400_000) }
        let before = Record(participantID: p.id, kind: .pain, start: real(deid.horizon.epochMilliseconds - 3_600_000), value: 1)
        let after = Record(participantID: p.id, kind: .pain, start: real(deid.horizon.epochMilliseconds + 3_600_000), value: 2)
        let kept = try #require(deid.record(before, of: p)?.start)
        #expect(kept <= deid.horizon)
        #expect(deid.record(after, of: p) == nil)
        #expect(deid.stats.leftOutAfterCreation == ["records": 1])
        // Consent signings are embargoed the same way (a re-consent inside it would bound the shift).
        func consent(_ at: Timestamp) -> Consent {
            Consent(
                id: UUID(), participantID: p.id, version: "1.0", documentSHA256: String(repeating: "a", count: 64), signedAt: at,
                signatureKind: .typed, sharing: .broad, status: .active, recordedAt: at)
        }
        #expect(deid.consent(consent(before.start), of: p).signedAt != nil)
        #expect(deid.consent(consent(after.start), of: p).signedAt == nil)
        #expect(deid.stats.leftOutAfterCreation == ["records": 1, "consent.signed_at": 1])
        // Without an embargo the later one is published (it is before the creation).
        var open = try deidentifier(.init(maxDays: 180, wholeWeeks: false))
        #expect(open.record(after, of: p) != nil)
    }

    @Test func exogenousSeriesAreLeftOutByDefault() throws {
        let types: [DataType: [RecordKind]] = [.biometric: [.steps, .heartRate], .environment: [.barometricPressure, .ambientTemperature]]
        let p = PlantedRoster.participants[1]
        let start = Timestamp(epochMilliseconds: Self.created.epochMilliseconds - 100 * 86_400_000)
        let pressure = Record(participantID: p.id, kind: .barometricPressure, start: start, value: 1013)
        let heart = Record(participantID: p.id, kind: .heartRate, start: start, value: 61)
        var deid = try deidentifier(.init(maxDays: 180, wholeWeeks: false, exogenousKinds: [.heartRate]), dataTypes: types)
        #expect(deid.record(pressure, of: p) == nil)
        #expect(deid.record(heart, of: p) == nil, "a kind the protocol marks exogenous")
        #expect(deid.stats.leftOutExogenous == ["barometric_pressure": 1, "heart_rate": 1])
        var steps = try deidentifier(.init(maxDays: 180, wholeWeeks: false), dataTypes: types)
        #expect(steps.record(heart, of: p) != nil)
        var dated = try deidentifier(.init(maxDays: 180, wholeWeeks: false, exogenous: .dated), dataTypes: types)
        #expect(dated.record(pressure, of: p) != nil)
        let signals = TimeSignals.recoverable(Fixtures.studyProtocol(dateShift: .init(maxDays: 180, wholeWeeks: false, exogenous: .dated), dataTypes: types))
        #expect(signals.map(\.attack).contains("exogenous"))
    }

    @Test func theReportStatesWhatAPolicyLeavesRecoverable() throws {
        let old = Fixtures.studyProtocol(dateShift: .init(maxDays: 182, wholeWeeks: true))
        #expect(TimeSignals.recoverable(old).map(\.attack) == ["holiday", "freshness", "study-start"])
        #expect(Deidentifier.warnings(for: old).contains { $0.hasPrefix("date_shift: whole-week shifts keep weekdays") })
        let new = Fixtures.studyProtocol(dateShift: .init(maxDays: 182, wholeWeeks: false, embargoDays: 182, maskHolidays: true))
        // Only the study start is left (consent signings are embargoed like records).
        #expect(TimeSignals.recoverable(new).map(\.attack) == ["study-start"])
        let report = try DeidentificationReport(studyProtocol: new, recipient: "analyst", stats: DeidentificationStats())
        #expect(report.dateShift.embargoDays == 182)
        #expect(report.dateShift.scope == "participant")
        #expect(report.dateShift.recoverableSignals?.count == 1)
    }
}

extension DeidentifierTests {
    /// A day total on a public holiday of the participant's region carries the same weekday's
    /// total of the week before, within 10%; other days and other regions keep their own.
    @Test func holidayDayTotalsAreMasked() throws {
        var roster = PlantedRoster.participants
        roster[0].timeZone = "America/New_York"
        let p = roster[0]
        let studyProtocol = Fixtures.studyProtocol(dateShift: .init(maxDays: 180, wholeWeeks: false, maskHolidays: true))
        var deid = try Deidentifier(
            studyProtocol: studyProtocol, recipient: "analyst", recipientKey: Fixtures.key, shiftKey: Fixtures.key, roster: roster,
            referenceDate: CivilDate(year: 2026, month: 6, day: 1) ?? Fixtures.date("2026-06-01"))
        // Thursdays 2025-11-20 and Thanksgiving 2025-11-27, midnight to midnight in New York (-05:00).
        func day(_ text: String, _ value: Double) throws -> Record {
            let start = try #require(Timestamp.parse("\(text)T00:00:00-05:00", defaultTimeZone: nil))
            return Record(participantID: p.id, kind: .steps, start: start, end: Timestamp(epochMilliseconds: start.epochMilliseconds + 86_400_000), value: value)
        }
        let before = deid.record(try day("2025-11-20", 9000), of: p)
        let holiday = try #require(deid.record(try day("2025-11-27", 2100), of: p)?.value)
        let after = deid.record(try day("2025-11-28", 4000), of: p)
        #expect(before?.value == 9000 && after?.value == 4000)
        #expect(holiday != 2100 && abs(holiday - 9000) <= 900 && holiday == holiday.rounded())
        #expect(deid.stats.maskedHolidayValues == 1)
    }
}
