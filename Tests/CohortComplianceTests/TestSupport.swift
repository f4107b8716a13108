import CohortCompliance
import CohortCore
import Foundation
import Testing

/// Builds protocols, subjects and instants for tests.
enum Fixture {
    static let dailySymptoms = ComplianceRule(
        id: "daily-symptoms", description: "Log your symptoms every day", dataType: .symptomLog, kinds: [], minPerDay: 1,
        threshold: 0.8)
    static let steps = ComplianceRule(
        id: "steps-twice", description: "Sync your steps twice a day", dataType: nil, kinds: [.steps], minPerDay: 2, threshold: 0.5)

    static func studyProtocol(
        durationDays: Int = 28, rules: [ComplianceRule] = [dailySymptoms, steps], reconsent: ReconsentPolicy = .major,
        currentVersion: String = "2.0"
    ) -> StudyProtocol {
        StudyProtocol(
            id: "axspa-test", revision: 3, title: "Test study", institution: "Test University",
            principalInvestigator: .init(name: "Dr. Test"),
            irb: .init(board: "Test IRB", approvalNumber: "IRB-1", expires: CivilDate(year: 2030, month: 1, day: 1) ?? CivilDate(daysSinceEpoch: 0)),
            durationDays: durationDays,
            consent: ConsentPolicy(
                currentVersion: currentVersion, reconsent: reconsent,
                documents: [
                    .init(version: "1.0", template: "templates/consent/1.0.mustache"),
                    .init(version: "1.1", template: "templates/consent/1.1.mustache"),
                    .init(version: "2.0", template: "templates/consent/2.0.mustache"),
                ]),
            dataTypes: [.symptomLog: [.pain, .fatigue], .biometric: [.steps, .heartRate]],
            compliance: CompliancePolicy(rules: rules),
            deidentification: DeidentificationPolicy(dateShift: .init(maxDays: 30, wholeWeeks: true), kAnonymity: nil, fields: [:]),
            export: ExportSettings(formats: [.csv]))
    }

    struct BadFixture: Error {}

    static func day(_ text: String) throws -> CivilDate {
        guard let date = CivilDate(iso: text) else { throw BadFixture() }
        return date
    }

    static func zone(_ identifier: String) throws -> TimeZone {
        guard let zone = TimeZone(identifier: identifier) else { throw BadFixture() }
        return zone
    }

    /// A wall-clock time (`2025-03-30 23:59`) read in `zone`.
    static func at(_ text: String, _ zoneID: String) throws -> Timestamp {
        guard let value = Timestamp.parse(text, defaultTimeZone: try zone(zoneID)) else { throw BadFixture() }
        return value
    }

    static func subject(
        _ code: String = "P-0001", zone: String = "Europe/Berlin", enrolled: String, withdrawnAt: Timestamp? = nil,
        status: ParticipantStatus = .active, id: UUID = UUID()
    ) throws -> ComplianceSubject {
        ComplianceSubject(id: id, code: code, timeZone: zone, enrolledOn: try day(enrolled), withdrawnAt: withdrawnAt, status: status)
    }
}
