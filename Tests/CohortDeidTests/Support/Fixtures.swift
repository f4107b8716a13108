import CohortCore
import Foundation

@testable import CohortDeid

enum Fixtures {
    static let key = Array(UInt8(0)..<32)
    static let otherKey = Array(UInt8(100)..<132)

    static let firstNames = [
        "José", "Zoë", "Siobhán", "Renée", "Katherine", "William", "Jane", "Mohammed", "Björn", "Anaïs", "Chloé", "Marta",
        "Ngozi", "Priya", "Thomas", "Élodie",
    ]
    static let lastNames = [
        "O'Brien", "Smith-Jones", "García", "Müller", "D’Angelo", "Nakamura", "Okonkwo", "Fitzgerald", "Lindqvist", "Kowalczyk",
        "Thibodeaux", "Villanueva", "Abernathy", "Castellanos", "Halvorsen", "Dubois",
    ]
    static let streets = ["Main St", "Elm Avenue", "Evergreen Terrace", "Oak Road", "Birch Lane", "Harbor Blvd"]

    static func uuid<G: RandomNumberGenerator>(_ g: inout G) -> UUID {
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<16 { bytes[i] = UInt8.random(in: 0...255, using: &g) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        return UUID(uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9], bytes[10], bytes[11],
            bytes[12], bytes[13], bytes[14], bytes[15]
        ))
    }

    static func date(_ text: String) -> CivilDate { CivilDate(iso: text) ?? CivilDate(daysSinceEpoch: 0) }

    /// A roster of `count` participants with full identities, all different.
    static func roster(count: Int, seed: UInt64 = 42) -> [Participant] {
        var g = SeededRandom(seed: seed)
        return (0..<count).map { i in
            let first = firstNames[i % firstNames.count]
            let last = lastNames[(i / firstNames.count + i) % lastNames.count]
            let birth = CivilDate(daysSinceEpoch: Int.random(in: -25_000 ... 5_000, using: &g))
            let area = 200 + i % 700
            let phone = "(\(area)) \(String(format: "%03d", 100 + i % 900))-\(String(format: "%04d", i % 10_000))"
            let zip = String(format: "%05d", Int.random(in: 1000...99_999, using: &g))
            let identity = ParticipantIdentity(
                name: "\(first) \(last)", email: "\(first.lowercased().folding(options: .diacriticInsensitive, locale: nil)).p\(i)@example.org",
                phone: phone, birthDate: birth, address: "\(10 + i) \(streets[i % streets.count]), Springfield, IL 62704", zip: zip,
                mrn: "A\(String(format: "%07d", 1_000_000 + i))", devices: ["\(first)'s Apple Watch", "Pixel 8 SN\(String(format: "%06d", i))"])
            return Participant(
                id: uuid(&g), code: String(format: "P-%04d", i + 1), sex: [.female, .male, .other][i % 3], timeZone: "America/Chicago",
                enrolledOn: date("2025-01-06").adding(days: i % 60), identity: identity)
        }
    }

    static let allFields: [String: FieldRule] = [
        "participant.id": FieldRule(.pseudonymize),
        "participant.birth_date": FieldRule(.year),
        "participant.age": FieldRule(.ageBand, bins: [18, 30, 45, 65]),
        "participant.zip": FieldRule(.zip3),
        "participant.sex": FieldRule(.keep),
        "participant.enrolled_on": FieldRule(.shift),
        "participant.status": FieldRule(.keep),
        "participant.time_zone": FieldRule(.generalize, map: ["America/Chicago": "US-Central"], other: "other"),
        "participant.devices": FieldRule(.generalize, map: ["Pixel 8": "phone"], other: "wearable"),
        "participant.name": FieldRule(.drop),
        "consent.version": FieldRule(.keep),
        "consent.signed_at": FieldRule(.shift),
        "consent.sharing": FieldRule(.keep),
        "consent.status": FieldRule(.keep),
        "records.start": FieldRule(.shift),
        "records.end": FieldRule(.shift),
        "records.value": FieldRule(.keep),
        "records.unit": FieldRule(.keep),
        "records.source": FieldRule(.generalize, map: ["Apple Watch": "smartwatch"], other: "other"),
        "symptom_log.note": FieldRule(.scrub),
        "medication_log.text": FieldRule(.keep),
    ]

    static func studyProtocol(
        fields: [String: FieldRule] = allFields, maxDays: Int = 180, wholeWeeks: Bool = false,
        kAnonymity: DeidentificationPolicy.KAnonymity? = nil, dateShift: DeidentificationPolicy.DateShift? = nil,
        dataTypes: [DataType: [RecordKind]] = [.symptomLog: [.pain, .fatigue], .biometric: [.heartRate, .steps], .medicationLog: [.medicationDose]]
    ) -> StudyProtocol {
        StudyProtocol(
            id: "axspa-wearables", revision: 3, title: "AxSpA wearables", institution: "Example University",
            principalInvestigator: .init(name: "Dr. Investigator"),
            irb: .init(board: "Example IRB", approvalNumber: "IRB-2025-001", expires: date("2026-12-31")), durationDays: 90,
            consent: ConsentPolicy(currentVersion: "1.0", reconsent: .major, documents: [.init(version: "1.0", template: "consent.mustache")]),
            dataTypes: dataTypes,
            compliance: CompliancePolicy(rules: []),
            deidentification: DeidentificationPolicy(
                dateShift: dateShift ?? .init(maxDays: maxDays, wholeWeeks: wholeWeeks), kAnonymity: kAnonymity, fields: fields),
            export: ExportSettings(formats: [.csv, .json]))
    }

    /// Records for `participant`: a mix of kinds over its first weeks, with odd offsets.
    static func records<G: RandomNumberGenerator>(for participant: Participant, count: Int, using g: inout G) -> [Record] {
        let base = Int64(participant.enrolledOn.daysSinceEpoch) * 86_400_000
        return (0..<count).map { _ in
            let start = base + Int64.random(in: 0..<(60 * 86_400_000), using: &g)
            let offset = Int32([-21_600, -18_000, 0, 3_600, 19_800].randomElement(using: &g) ?? 0)
            let kind = [RecordKind.pain, .heartRate, .steps, .medicationDose].randomElement(using: &g) ?? .pain
            let end: Timestamp? =
                kind == .steps ? Timestamp(epochMilliseconds: start + 86_399_000, utcOffsetSeconds: offset) : nil
            return Record(
                participantID: participant.id, kind: kind, start: Timestamp(epochMilliseconds: start, utcOffsetSeconds: offset), end: end,
                value: Double(Int.random(in: 1...9, using: &g)), text: kind == .medicationDose ? "ibuprofen" : nil, source: "Apple Watch",
                note: kind == .pain ? "felt ok" : nil)
        }
    }
}

extension Array where Element == CohortDeid.ResidualFinding {
    /// The findings of roster identifiers: what the reference and attacker scanners model. The
    /// unknown-token findings of free-text fields (the allow-list) have tests of their own.
    var rosterOnly: [ResidualFinding] { filter { $0.kind != .unknownToken } }
}
