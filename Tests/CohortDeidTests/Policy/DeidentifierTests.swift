import CohortCore
import Foundation
import Testing

@testable import CohortDeid

struct DeidentifierTests {
    static let reference = Fixtures.date("2025-06-01")

    static func make(_ studyProtocol: StudyProtocol = Fixtures.studyProtocol(), roster: [Participant] = PlantedRoster.participants)
        throws -> Deidentifier
    {
        try Deidentifier(
            studyProtocol: studyProtocol, recipient: "analyst", recipientKey: Fixtures.key, shiftKey: Fixtures.key, roster: roster, referenceDate: reference)
    }

    static func withBirth(_ birth: String, enrolled: String = "2025-01-06") -> Participant {
        var p = PlantedRoster.participants[0]
        p.identity?.birthDate = Fixtures.date(birth)
        p.enrolledOn = Fixtures.date(enrolled)
        return p
    }

    @Test func policyWithoutPseudonymizedIDIsRefused() {
        var fields = Fixtures.allFields
        fields["participant.id"] = FieldRule(.keep)
        #expect(throws: CohortError.self) { try Self.make(Fixtures.studyProtocol(fields: fields)) }
        fields["participant.id"] = nil
        #expect(throws: CohortError.self) { try Self.make(Fixtures.studyProtocol(fields: fields)) }
    }

    @Test func ageEightyNineKeepsBirthYearNinetyDoesNot() throws {
        var deid = try Self.make()
        let eightyNine = deid.participant(Self.withBirth("1935-07-01"))  // 89 at enrollment and on the reference date
        #expect(eightyNine.birthYear == 1935)
        #expect(eightyNine.ageBand == "65–<90")
        let ninety = deid.participant(Self.withBirth("1934-12-01"))  // 90 at enrollment
        #expect(ninety.birthYear == nil)
        #expect(ninety.ageBand == "90+")
        let turnsNinety = deid.participant(Self.withBirth("1935-05-01"))  // 89 at enrollment, 90 by the reference date
        #expect(turnsNinety.birthYear == nil)
        #expect(turnsNinety.ageBand == "90+")
    }

    @Test func participantRow() throws {
        var deid = try Self.make()
        var p = PlantedRoster.participants[1]
        p.status = .stopped
        p.withdrawnAt = Timestamp(epochMilliseconds: 1_740_000_000_000, utcOffsetSeconds: -21_600)
        let row = deid.participant(p)
        let offset = try DateShifter(key: Fixtures.key, maxDays: 180, wholeWeeks: false).offset(for: p.id)
        #expect(row.pseudonym == Pseudonymizer(recipientKey: Fixtures.key).pseudonym(for: p.id))
        #expect(row.birthYear == 1975)
        #expect(row.ageBand == "45–<65")
        #expect(row.zip3 == "625")
        #expect(row.sex == .female)
        #expect(row.status == .stopped)
        #expect(row.enrolledOn == p.enrolledOn.adding(days: offset))
        let zone = try #require(TimeZone(identifier: p.timeZone))
        let withdrawn = try #require(p.withdrawnAt)
        let expected = try CalendarShift.shift(withdrawn.epochMilliseconds, days: offset, zone: zone)
        #expect(row.withdrawnAt?.epochMilliseconds == expected)
        #expect(row.withdrawnAt?.utcOffsetSeconds == -21_600)
        #expect(row.utcOffset == "-06:00")
        #expect(row.timeZone == "US-Central")
        #expect(row.devices == ["wearable"])
    }

    @Test func nothingDatedAfterTheExportsCreationIsPublished() throws {
        let createdAt = try #require(Timestamp.parse("2025-03-01T12:00:00Z", defaultTimeZone: nil))
        var deid = try Deidentifier(
            studyProtocol: Fixtures.studyProtocol(), recipient: "analyst", recipientKey: Fixtures.key, shiftKey: Fixtures.key, roster: PlantedRoster.participants,
            referenceDate: createdAt.localDate, createdAt: createdAt)
        let p = PlantedRoster.participants[0]
        let days = Int64(-deid.shifter.offset(for: p.id))
        let now = Record(participantID: p.id, kind: .pain, start: createdAt, value: 1)
        // Real instants so late that even shifted back they are two hours after the creation.
        let late = Timestamp(epochMilliseconds: createdAt.epochMilliseconds + days * 86_400_000 + 7_200_000)
        let lateStart = Record(participantID: p.id, kind: .pain, start: late, value: 2)
        let lateEnd = Record(participantID: p.id, kind: .steps, start: createdAt, end: late, value: 3)
        let nowRow = deid.record(now, of: p)
        let lateStartRow = deid.record(lateStart, of: p)
        let lateEndRow = deid.record(lateEnd, of: p)
        let published = try #require(nowRow?.start)
        #expect(published <= createdAt)
        #expect(lateStartRow == nil)
        #expect(lateEndRow == nil)
        let consent = Consent(
            id: UUID(), participantID: p.id, version: "1.0", documentSHA256: String(repeating: "a", count: 64), signedAt: late,
            signatureKind: .typed, sharing: .broad, status: .active, recordedAt: late)
        let consentRow = deid.consent(consent, of: p)
        #expect(consentRow.signedAt == nil)
        let stats = deid.stats
        #expect(stats.records == 1)
        #expect(stats.leftOutAfterCreation == ["records": 2, "consent.signed_at": 1])
        #expect(stats.applied["symptom_log.start"]?.values == 1)
        let report = try DeidentificationReport(studyProtocol: Fixtures.studyProtocol(), recipient: "analyst", stats: stats)
        #expect(report.dateShift.leftOutAfterCreation["records"] == 2)
        #expect(report.dateShift.rangeDays == [-180, -1])
    }

    @Test func theOffsetIsPublishedOnlyWithInstants() throws {
        var fields = Fixtures.allFields
        #expect(Deidentifier.publishesInstants(Fixtures.studyProtocol(fields: fields).deidentification))
        for key in fields.keys where key.hasSuffix(".start") || key.hasSuffix(".end") || key.hasSuffix("signed_at") || key.hasSuffix("enrolled_on") {
            fields[key] = FieldRule(.drop)
        }
        var deid = try Self.make(Fixtures.studyProtocol(fields: fields))
        #expect(!deid.publishesInstants)
        let row = deid.participant(PlantedRoster.participants[0])
        #expect(row.utcOffset == nil)
    }

    @Test func restrictedZIPBecomesZeros() throws {
        var deid = try Self.make()
        var p = PlantedRoster.participants[0]
        p.identity?.zip = "89301"
        #expect(deid.participant(p).zip3 == "000")
    }

    @Test func directIdentifiersNeverAppearEvenWhenThePolicySaysKeep() throws {
        var fields = Fixtures.allFields
        for field in ["name", "email", "phone", "address", "mrn", "code"] { fields["participant.\(field)"] = FieldRule(.keep) }
        fields["participant.devices"] = FieldRule(.keep)
        var deid = try Self.make(Fixtures.studyProtocol(fields: fields))
        for p in PlantedRoster.participants {
            let json = String(decoding: try CanonicalJSON.encode(deid.participant(p)), as: UTF8.self)
            let folded = PlantedRoster.fold(json)
            for fragment in PlantedRoster.forbiddenFragments where fragment.count >= 3 {
                #expect(!folded.contains(PlantedRoster.fold(fragment)), "\(json)")
            }
        }
        #expect(deid.stats.directIdentifiersRemoved["participant.name"] == 4)
        let warnings = Deidentifier.warnings(for: Fixtures.studyProtocol(fields: fields))
        #expect(warnings.contains { $0.hasPrefix("participant.name:") && $0.contains("always removed") })
        #expect(warnings.contains { $0.hasPrefix("participant.devices:") })
    }

    @Test func fieldWithoutRuleIsDroppedAndReported() throws {
        var fields = Fixtures.allFields
        fields["symptom_log.note"] = nil
        let studyProtocol = Fixtures.studyProtocol(fields: fields)
        var deid = try Self.make(studyProtocol)
        let p = PlantedRoster.participants[0]
        let record = Record(
            participantID: p.id, kind: .pain, start: Timestamp(epochMilliseconds: 1_741_940_000_000), value: 4,
            note: "José García felt bad")
        let deidentified = deid.record(record, of: p)
        let row = try #require(deidentified)
        #expect(row.note == nil)
        #expect(row.value == 4)
        let report = try DeidentificationReport(studyProtocol: studyProtocol, recipient: "analyst", stats: deid.stats)
        #expect(report.droppedUnruled.contains(.init(field: "symptom_log.note", values: 1)))
        #expect(report.droppedUnruled.contains { $0.field == "biometric.note" })
        #expect(!report.rules.contains { $0.field == "symptom_log.note" })
    }

    @Test func recordFields() throws {
        var fields = Fixtures.allFields
        fields["biometric.value"] = FieldRule(.generalize, bins: [0, 5, 10])
        fields["medication_log.source"] = FieldRule(.scrub)
        fields["records.start"] = FieldRule(.year)
        var deid = try Self.make(Fixtures.studyProtocol(fields: fields))
        let p = PlantedRoster.participants[0]
        let start = Timestamp(epochMilliseconds: 1_741_940_000_000, utcOffsetSeconds: 3_600)
        let bioRow = deid.record(Record(participantID: p.id, kind: .steps, start: start, value: 7, source: "Apple Watch"), of: p)
        let bio = try #require(bioRow)
        #expect(bio.value == nil)
        #expect(bio.valueLabel == "5–<10")
        #expect(bio.unit == "{steps}")
        #expect(bio.source == "smartwatch")
        #expect(bio.start?.iso8601 == "2025-01-01T00:00:00-06:00", "1 January at the participant's (Chicago's) standard offset")
        // Apple Health keeps the hardware identifier; the map's family name covers it.
        for (hardware, expected) in [("Watch2,4", "smartwatch"), ("Watch", "smartwatch"), ("iPhone14,2", "other"), ("Watchman 3", "other")] {
            let row = deid.record(Record(participantID: p.id, kind: .steps, start: start, value: 7, source: hardware), of: p)
            #expect(try #require(row).source == expected, "\(hardware)")
        }
        let medRow = deid.record(
            Record(participantID: p.id, kind: .medicationDose, start: start, value: 200, text: "ibuprofen", source: "José's iPhone"),
            of: p)
        let med = try #require(medRow)
        #expect(med.text == "ibuprofen")
        #expect(med.source == "[DEVICE]")
        #expect(med.value == 200)
        #expect(deid.stats.scrubTokens[.device] == 1)
    }

    @Test func recordStatsCountEveryFieldOutcomeUnderItsRule() throws {
        var fields = Fixtures.allFields
        fields["biometric.unit"] = FieldRule(.scrub)  // does not apply to a unit: unsupported
        fields["symptom_log.note"] = FieldRule(.drop)  // dropped by rule: counted as applied
        fields["records.end"] = nil  // unruled
        fields["biometric.start"] = FieldRule(.year)  // a type's own rule wins over records.start
        var deid = try Self.make(Fixtures.studyProtocol(fields: fields))
        let (a, b) = (PlantedRoster.participants[0], PlantedRoster.participants[1])
        let start = Timestamp(epochMilliseconds: 1_741_940_000_000, utcOffsetSeconds: 3_600)
        let end = Timestamp(epochMilliseconds: 1_741_943_600_000, utcOffsetSeconds: 3_600)
        for p in [a, b, a] {
            _ = deid.record(Record(participantID: p.id, kind: .steps, start: start, end: end, value: 7, source: "Apple Watch"), of: p)
            _ = deid.record(Record(participantID: p.id, kind: .pain, start: start, value: 3, note: "fine"), of: p)
        }
        let last = deid.record(Record(participantID: b.id, kind: .pain, start: start, value: 2), of: b)
        let row = try #require(last)
        #expect(row.pseudonym == deid.pseudonym(of: b), "the cached pseudonym follows the participant")
        let stats = deid.stats
        #expect(stats.records == 7)
        #expect(stats.applied["biometric.start"] == .init(rule: "biometric.start", transform: .year, values: 3))
        #expect(stats.applied["symptom_log.start"] == .init(rule: "records.start", transform: .shift, values: 4))
        #expect(stats.applied["biometric.value"]?.values == 3 && stats.applied["symptom_log.value"]?.values == 4)
        #expect(stats.applied["biometric.source"] == .init(rule: "records.source", transform: .generalize, values: 3))
        #expect(stats.applied["symptom_log.note"] == .init(rule: "symptom_log.note", transform: .drop, values: 3))
        #expect(stats.applied["symptom_log.unit"]?.values == 4)
        #expect(stats.applied["biometric.unit"] == nil)
        #expect(stats.droppedUnsupported["biometric.unit"] == 3)
        #expect(stats.droppedUnruled == ["biometric.end": 3])
        #expect(deid.stats == stats, "reading the stats does not count anything twice")
    }

    @Test func consentRow() throws {
        var deid = try Self.make()
        let p = PlantedRoster.participants[2]
        let signed = Timestamp(epochMilliseconds: 1_736_150_400_000, utcOffsetSeconds: -21_600)
        let consent = Consent(
            id: UUID(), participantID: p.id, version: "1.0", documentSHA256: String(repeating: "a", count: 64), signedAt: signed,
            signatureKind: .typed, sharing: .broad, status: .active, recordedAt: signed)
        let row = deid.consent(consent, of: p)
        let offset = try DateShifter(key: Fixtures.key, maxDays: 180, wholeWeeks: false).offset(for: p.id)
        let zone = try #require(TimeZone(identifier: p.timeZone))
        let expected = try CalendarShift.shift(signed.epochMilliseconds, days: offset, zone: zone)
        #expect(row.signedAt?.epochMilliseconds == expected)
        #expect(row.signedAt?.utcOffsetSeconds == -21_600)
        #expect(row.version == "1.0" && row.sharing == "broad" && row.status == "active")
        #expect(row.documentSHA256 == nil)  // no rule names it
        #expect(deid.stats.droppedUnruled["consent.document_sha256"] == 1)
    }

    @Test func previewShowsBeforeAndAfterWithoutCounting() throws {
        let deid = try Self.make()
        let p = PlantedRoster.participants[0]
        let record = Record(
            participantID: p.id, kind: .pain, start: Timestamp(epochMilliseconds: 1_741_940_000_000), value: 4,
            note: "José called from (555) 123-4567")
        let rows = deid.preview(p, records: [record])
        #expect(rows.contains(.init(field: "participant.name", before: "José García", after: nil)))
        #expect(rows.contains(.init(field: "participant.zip", before: "62704", after: "627")))
        #expect(rows.contains(.init(field: "symptom_log.note", before: record.note, after: "[NAME] called from [PHONE]")))
        #expect(deid.stats == DeidentificationStats())
    }
}
