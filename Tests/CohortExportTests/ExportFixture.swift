import CohortCore
import Foundation

@testable import CohortExport

/// A small fixed cohort: two participants, consent history with a re-consent and a withdrawal,
/// records of five families including text that needs CSV quoting.
enum ExportFixture {
    static let createdAt = Timestamp(epochMilliseconds: 1_767_225_600_000, utcOffsetSeconds: 0)  // 2026-01-01T00:00:00Z

    static func ts(_ text: String) -> Timestamp {
        guard let value = Timestamp.parse(text, defaultTimeZone: nil) else { preconditionFailure("bad fixture timestamp \(text)") }
        return value
    }

    static func date(_ text: String) -> CivilDate? { CivilDate(iso: text) }

    static let fullPolicy = DeidentificationPolicy(
        dateShift: .init(maxDays: 30, wholeWeeks: true), kAnonymity: nil,
        fields: [
            "participant.id": FieldRule(.pseudonymize),
            "participant.name": FieldRule(.drop),
            "participant.sex": FieldRule(.keep),
            "participant.birth_date": FieldRule(.year),
            "participant.age": FieldRule(.ageBand, bins: [18, 30, 45, 60, 75, 90]),
            "participant.zip": FieldRule(.zip3),
            "participant.enrolled_on": FieldRule(.shift),
            "participant.status": FieldRule(.keep),
            "consent.version": FieldRule(.keep),
            "consent.document_sha256": FieldRule(.keep),
            "consent.signed_at": FieldRule(.shift),
            "consent.sharing": FieldRule(.keep),
            "consent.status": FieldRule(.keep),
            "records.participant": FieldRule(.pseudonymize),
            "records.kind": FieldRule(.keep),
            "records.start": FieldRule(.shift),
            "records.end": FieldRule(.shift),
            "records.value": FieldRule(.keep),
            "records.unit": FieldRule(.keep),
            "records.text": FieldRule(.scrub),
            "records.note": FieldRule(.scrub),
            "biometric.source": FieldRule(.generalize, map: ["Apple Watch": "smartwatch"]),
            "flare_event.value": FieldRule(.generalize, bins: [0, 4, 7, 10]),
        ])

    /// The same policy without notes, sources, units or ZIP: those columns must disappear.
    static var narrowPolicy: DeidentificationPolicy {
        var policy = fullPolicy
        policy.fields["records.note"] = FieldRule(.drop)
        policy.fields["records.unit"] = nil
        policy.fields["biometric.source"] = nil
        policy.fields["participant.zip"] = nil
        return policy
    }

    /// The fixture study; it names an RxNorm code for ibuprofen (the fixture's medication).
    static func studyProtocol(policy: DeidentificationPolicy = fullPolicy) -> StudyProtocol {
        var study = StudyProtocol(
            id: "axspa-wearables", revision: 3, title: "Wearables in axial spondyloarthritis", institution: "Example University",
            principalInvestigator: .init(name: "Dr. Example"),
            irb: .init(board: "Example IRB", approvalNumber: "IRB-2025-001", expires: CivilDate(year: 2027, month: 1, day: 1) ?? CivilDate(daysSinceEpoch: 0)),
            durationDays: 180,
            consent: .init(currentVersion: "2.0", reconsent: .major, documents: [.init(version: "1.0", template: "t1"), .init(version: "2.0", template: "t2")]),
            dataTypes: [
                .symptomLog: [.pain, .morningStiffness, .fatigue],
                .biometric: [.heartRate, .steps, .sleepDuration],
                .medicationLog: [.medicationDose],
                .flareEvent: [.flare],
                .migraineEntry: [.migraineAttack],
            ],
            compliance: .init(rules: []), deidentification: policy, export: .init(formats: [.csv, .json, .fhir]))
        study.medicationCodes = ["ibuprofen": "5640", "naproxen": "7258"]
        return study
    }

    /// The fixture's context; both FHIR layouts by default, so the golden files pin both shapes.
    static func context(
        formats: Set<ExportFormat> = Set(ExportFormat.allCases), policy: DeidentificationPolicy = fullPolicy, fhirLayout: FHIRLayout = .both,
        fhirTransactions: Bool = false
    ) -> ExportContext {
        ExportContext(
            studyProtocol: studyProtocol(policy: policy), protocolSHA256: String(repeating: "a", count: 64),
            policySHA256: String(repeating: "b", count: 64), recipient: "analyst-team", createdAt: createdAt, toolVersion: "0.1.0",
            exclusions: ["withdrawn-exclude": 1], formats: formats, fhirLayout: fhirLayout, fhirTransactions: fhirTransactions)
    }

    struct Participant {
        var participant: DeidentifiedParticipant
        var consents: [DeidentifiedConsent]
        var records: [DeidentifiedRecord]
    }

    static var cohort: [Participant] {
        var p1 = DeidentifiedParticipant(pseudonym: "K7QF2M4XRB6TNV3D")
        p1.sex = .female
        p1.birthYear = 1984
        p1.ageBand = "30-44"
        p1.zip3 = "021"
        p1.enrolledOn = date("2025-03-10")
        p1.status = .active
        p1.utcOffset = "+01:00"  // every instant of a participant is written at their one offset
        var c1 = DeidentifiedConsent(pseudonym: p1.pseudonym)
        c1.version = "1.0"
        c1.documentSHA256 = String(repeating: "1", count: 64)
        c1.signedAt = ts("2025-03-10T09:15:00+01:00")
        c1.sharing = "broad"
        c1.status = "superseded"
        var c2 = c1
        c2.version = "2.0"
        c2.documentSHA256 = String(repeating: "2", count: 64)
        c2.signedAt = ts("2025-06-02T17:40:30+01:00")
        c2.status = "active"

        var pain = DeidentifiedRecord(pseudonym: p1.pseudonym, kind: .pain)
        pain.start = ts("2025-03-11T08:30:00+01:00")
        pain.value = 7
        pain.unit = "{score}"
        pain.source = "app"
        pain.note = "Bad night, \"very\" stiff\r\nafter [NAME] called; ünïcode ok"
        var hr = DeidentifiedRecord(pseudonym: p1.pseudonym, kind: .heartRate)
        hr.start = ts("2025-03-11T08:31:05.250+01:00")
        hr.value = 72.5
        hr.unit = "/min"
        hr.source = "smartwatch"
        var steps = DeidentifiedRecord(pseudonym: p1.pseudonym, kind: .steps)
        steps.start = ts("2025-03-11T00:00:00+01:00")
        steps.end = ts("2025-03-12T00:00:00+01:00")
        steps.value = 12_034
        steps.unit = "{steps}"
        steps.source = "smartwatch"
        var sleep = DeidentifiedRecord(pseudonym: p1.pseudonym, kind: .sleepDuration)
        sleep.start = ts("2025-03-10T23:10:00+01:00")
        sleep.end = ts("2025-03-11T06:25:00+01:00")
        sleep.value = 7.25
        sleep.unit = "h"
        var med = DeidentifiedRecord(pseudonym: p1.pseudonym, kind: .medicationDose)
        med.start = ts("2025-03-11T09:00:00+01:00")
        med.value = 400
        med.unit = "mg"
        med.text = "ibuprofen"
        var flare = DeidentifiedRecord(pseudonym: p1.pseudonym, kind: .flare)
        flare.start = ts("2025-03-14T07:00:00+01:00")
        flare.end = ts("2025-03-16T20:00:00+01:00")
        flare.valueLabel = "4-7"
        flare.note = "lower back"

        var p2 = DeidentifiedParticipant(pseudonym: "W3HZ7P5LCA2YUE7G")
        p2.sex = .male
        p2.ageBand = "90+"
        p2.zip3 = "000"
        p2.enrolledOn = date("2025-04-01")
        p2.status = .stopped
        p2.utcOffset = "-05:00"
        p2.withdrawnAt = ts("2025-05-20T11:00:00-05:00")
        var c3 = DeidentifiedConsent(pseudonym: p2.pseudonym)
        c3.version = "1.0"
        c3.documentSHA256 = String(repeating: "1", count: 64)
        c3.signedAt = ts("2025-04-01T09:00:00-05:00")
        c3.sharing = "study-only"
        c3.status = "withdrawn"
        var migraine = DeidentifiedRecord(pseudonym: p2.pseudonym, kind: .migraineAttack)
        migraine.start = ts("2025-04-03T14:00:00-05:00")
        migraine.end = ts("2025-04-03T18:30:00-05:00")
        migraine.value = 6
        migraine.unit = "{score}"
        migraine.text = "stress; sleep"
        var stiffness = DeidentifiedRecord(pseudonym: p2.pseudonym, kind: .morningStiffness)
        stiffness.start = ts("2025-04-04T06:30:00-05:00")
        stiffness.value = 45
        stiffness.unit = "min"
        var fatigue = DeidentifiedRecord(pseudonym: p2.pseudonym, kind: .fatigue)
        fatigue.start = ts("2025-04-04T06:31:00-05:00")
        fatigue.value = 3.5
        fatigue.unit = "{score}"
        fatigue.note = ""

        return [
            Participant(participant: p1, consents: [c2, c1], records: [pain, hr, steps, sleep, med, flare]),
            Participant(participant: p2, consents: [c3], records: [migraine, stiffness, fatigue]),
        ]
    }

    /// Writes the fixture cohort under `root/data` and returns the files written.
    @discardableResult
    static func export(to root: URL, context: ExportContext = context()) throws -> [ExportedFile] {
        let writer = try ExportWriter(dataDirectory: root.appendingPathComponent("data", isDirectory: true), context: context)
        for entry in cohort {
            try writer.beginParticipant(entry.participant, consents: entry.consents)
            for record in entry.records { try writer.write(record) }
        }
        return try writer.finish(deidentificationSummary: ["participant.birth_date:year": 1, "records.note:scrub": 3])
    }

    /// A fresh temporary directory.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-export-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The repository root (two levels above this file's folder).
    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
}
