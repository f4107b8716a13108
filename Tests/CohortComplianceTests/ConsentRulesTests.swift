import CohortCore
import Foundation
import Testing

@testable import CohortCompliance

struct ConsentRulesTests {
    static let digest = String(repeating: "ab", count: 32)
    let zone = "Europe/Berlin"

    func consent(
        _ version: String, signed: String, status: ConsentStatus = .active, participant: UUID, id: UUID = UUID()
    ) throws -> Consent {
        let signedAt = try Fixture.at(signed, zone)
        return Consent(
            id: id, participantID: participant, version: version, documentSHA256: Self.digest, signedAt: signedAt, signatureKind: .typed,
            sharing: .studyOnly, status: status, recordedAt: signedAt)
    }

    func draft(_ version: String, signed: String) throws -> ConsentDraft {
        ConsentDraft(version: version, documentSHA256: Self.digest, signedAt: try Fixture.at(signed, zone), signatureKind: .typed, sharing: .broad)
    }

    let rules = ConsentRules(studyProtocol: Fixture.studyProtocol())

    @Test func unknownVersionIsRejectedListingKnownVersions() throws {
        let subject = try Fixture.subject(zone: zone, enrolled: "2025-03-10")
        let error = try #require(throws: CohortError.self) {
            try rules.validateNewConsent(
                try draft("3.0", signed: "2025-03-10 10:00"), for: subject, history: [], now: try Fixture.at("2025-03-11 10:00", zone).date,
                id: UUID())
        }
        #expect(error.code == .notFound)
        #expect(error.location?.field == "version")
        #expect(error.hint?.contains("1.0, 1.1, 2.0") == true)
    }

    @Test func signingBeforeTheEnrollmentDayInTheParticipantsZoneIsRejected() throws {
        let subject = try Fixture.subject(zone: zone, enrolled: "2025-03-10")
        let now = try Fixture.at("2025-03-12 10:00", zone).date
        let error = try #require(throws: CohortError.self) {
            try rules.validateNewConsent(try draft("2.0", signed: "2025-03-09 23:59"), for: subject, history: [], now: now, id: UUID())
        }
        #expect(error.code == .invalidInput)
        #expect(error.location?.field == "signed_at")
        // 00:10 Berlin is still 03-09 in UTC: the participant's zone decides, so this is accepted.
        let change = try rules.validateNewConsent(try draft("2.0", signed: "2025-03-10 00:10"), for: subject, history: [], now: now, id: UUID())
        #expect(change.consent.status == .active)
    }

    @Test func signingInTheFutureIsRejected() throws {
        let subject = try Fixture.subject(zone: zone, enrolled: "2025-03-10")
        let error = try #require(throws: CohortError.self) {
            try rules.validateNewConsent(
                try draft("2.0", signed: "2025-03-12 10:01"), for: subject, history: [], now: try Fixture.at("2025-03-12 10:00", zone).date,
                id: UUID())
        }
        #expect(error.code == .invalidInput)
        #expect(error.message.contains("future"))
    }

    @Test func reconsentAddsARowAndSupersedesTheActiveOne() throws {
        let subject = try Fixture.subject(zone: zone, enrolled: "2025-03-10")
        let old = try consent("1.0", signed: "2025-03-10 09:00", status: .superseded, participant: subject.id)
        let active = try consent("1.1", signed: "2025-04-01 09:00", participant: subject.id)
        let newID = UUID()
        let now = try Fixture.at("2025-06-01 12:00", zone)
        let change = try rules.validateNewConsent(
            try draft("2.0", signed: "2025-06-01 11:00"), for: subject, history: [active, old], now: now.date, id: newID)
        #expect(change.supersededIDs == [active.id])
        #expect(change.consent.id == newID)
        #expect(change.consent.version == "2.0")
        #expect(change.consent.status == .active)
        #expect(change.consent.participantID == subject.id)
        #expect(change.consent.recordedAt.epochMilliseconds == now.epochMilliseconds)
        #expect(change.reconsentDue == false)
    }

    @Test func signingAnOlderVersionUnderAMajorPolicyReportsReconsentStillDue() throws {
        let subject = try Fixture.subject(zone: zone, enrolled: "2025-03-10")
        let change = try rules.validateNewConsent(
            try draft("1.1", signed: "2025-03-10 11:00"), for: subject, history: [], now: try Fixture.at("2025-03-11 10:00", zone).date,
            id: UUID())
        #expect(change.reconsentDue == true)
        #expect(change.supersededIDs.isEmpty)
    }

    @Test func aConsentSignedBeforeTheConsentInForceIsAConflict() throws {
        let subject = try Fixture.subject(zone: zone, enrolled: "2025-03-10")
        let active = try consent("2.0", signed: "2025-04-01 09:00", participant: subject.id)
        let error = try #require(throws: CohortError.self) {
            try rules.validateNewConsent(
                try draft("2.0", signed: "2025-03-20 09:00"), for: subject, history: [active],
                now: try Fixture.at("2025-05-01 09:00", zone).date, id: UUID())
        }
        #expect(error.code == .conflict)
    }

    @Test func withdrawnParticipantsCannotConsentAgainAndBadDigestsAreRejected() throws {
        let withdrawn = try Fixture.subject(
            zone: zone, enrolled: "2025-03-10", withdrawnAt: try Fixture.at("2025-03-20 09:00", zone), status: .stopped)
        let now = try Fixture.at("2025-05-01 09:00", zone).date
        let policy = try #require(throws: CohortError.self) {
            try rules.validateNewConsent(try draft("2.0", signed: "2025-04-01 09:00"), for: withdrawn, history: [], now: now, id: UUID())
        }
        #expect(policy.code == .policy)
        var bad = try draft("2.0", signed: "2025-04-01 09:00")
        bad.documentSHA256 = "not-a-digest"
        let active = try Fixture.subject(zone: zone, enrolled: "2025-03-10")
        let digest = try #require(throws: CohortError.self) {
            try rules.validateNewConsent(bad, for: active, history: [], now: now, id: UUID())
        }
        #expect(digest.location?.field == "document_sha256")
    }

    @Test func consentInForceIsTheLatestActiveWhateverTheOrder() throws {
        let p = UUID()
        let a = try consent("1.0", signed: "2025-03-10 09:00", status: .superseded, participant: p)
        let b = try consent("1.1", signed: "2025-04-10 09:00", participant: p)
        let c = try consent("2.0", signed: "2025-05-10 09:00", status: .withdrawn, participant: p)
        let other = try consent("2.0", signed: "2025-06-10 09:00", participant: UUID())
        #expect(rules.consentInForce(in: [c, b, a], participantID: p)?.id == b.id)
        #expect(rules.consentInForce(in: [b, other, a], participantID: p)?.id == b.id)
        #expect(rules.consentInForce(in: [a, c], participantID: p) == nil)
    }

    @Test(arguments: [
        (ReconsentPolicy.major, "1.0", "2.0", true), (.major, "1.0", "1.1", false), (.major, "2.0", "2.0", false),
        (.minor, "1.0", "1.1", true), (.minor, "1.1", "1.1.5", false), (.any, "1.1", "1.1.5", true),
        (.none, "1.0", "2.0", false), (.none, "1.0", "9.3", false),
    ])
    func reconsentIsDueWhenThePolicySaysSo(policy: ReconsentPolicy, signed: String, current: String, due: Bool) throws {
        let rules = ConsentRules(studyProtocol: Fixture.studyProtocol(reconsent: policy, currentVersion: current))
        let subject = try Fixture.subject(zone: zone, enrolled: "2025-03-10")
        let signedConsent = try consent(signed, signed: "2025-03-10 09:00", participant: subject.id)
        #expect(rules.isReconsentDue(signedConsent) == due)
        let eligibility = try rules.importEligibility(for: subject, history: [signedConsent], at: try Fixture.at("2025-03-12 09:00", zone))
        #expect(eligibility == (due ? .refused(.reconsentDue) : .allowed))
        #expect(try rules.statusRow(for: subject, history: [signedConsent]).reconsentDue == due)
    }

    @Test func importsNeedAConsentInForce() throws {
        let subject = try Fixture.subject(zone: zone, enrolled: "2025-03-10")
        let superseded = try consent("2.0", signed: "2025-03-10 09:00", status: .superseded, participant: subject.id)
        let at = try Fixture.at("2025-03-12 09:00", zone)
        #expect(try rules.importEligibility(for: subject, history: [], at: at) == .refused(.noConsent))
        #expect(try rules.importEligibility(for: subject, history: [superseded], at: at) == .refused(.noConsent))
    }

    @Test(arguments: [ParticipantStatus.stopped, .excluded])
    func stopAndExcludeAcceptDataFromBeforeTheWithdrawalOnly(status: ParticipantStatus) throws {
        let withdrawnAt = try Fixture.at("2025-03-20 15:00", zone)
        let subject = try Fixture.subject(zone: zone, enrolled: "2025-03-10", withdrawnAt: withdrawnAt, status: status)
        // The consent row itself was marked withdrawn when the participant withdrew.
        let signed = try consent("2.0", signed: "2025-03-10 09:00", status: .withdrawn, participant: subject.id)
        let gate = try rules.importGate(for: subject, history: [signed])
        #expect(gate.check(try Fixture.at("2025-03-20 14:59", zone)) == .allowed)
        #expect(gate.check(withdrawnAt) == .refused(.withdrawn))
        #expect(gate.check(try Fixture.at("2025-03-25 09:00", zone)) == .refused(.withdrawn))
    }

    @Test func erasedParticipantsAcceptNothing() throws {
        let subject = try Fixture.subject(
            zone: zone, enrolled: "2025-03-10", withdrawnAt: try Fixture.at("2025-03-20 15:00", zone), status: .erased)
        let signed = try consent("2.0", signed: "2025-03-10 09:00", participant: subject.id)
        #expect(try rules.importEligibility(for: subject, history: [signed], at: try Fixture.at("2025-03-12 09:00", zone)) == .refused(.erased))
    }

    @Test func importsOutsideTheStudyWindowAreRefusedInTheParticipantsZone() throws {
        let rules = ConsentRules(studyProtocol: Fixture.studyProtocol(durationDays: 10))
        let subject = try Fixture.subject(zone: zone, enrolled: "2025-03-10")
        let gate = try rules.importGate(for: subject, history: [try consent("2.0", signed: "2025-03-10 09:00", participant: subject.id)])
        #expect(gate.check(try Fixture.at("2025-03-09 23:59", zone)) == .refused(.beforeEnrollment))
        #expect(gate.check(try Fixture.at("2025-03-10 00:00", zone)) == .allowed)
        #expect(gate.check(try Fixture.at("2025-03-19 23:59", zone)) == .allowed)
        #expect(gate.check(try Fixture.at("2025-03-20 00:00", zone)) == .refused(.afterStudyEnd))
    }

    @Test func refusalMessagesSayWhatToDoWithoutIdentifiers() {
        for refusal in ImportRefusal.allCases {
            let error = refusal.error(at: .init(file: "app.csv", line: 7, field: "start"))
            #expect(!error.message.isEmpty && error.hint?.isEmpty == false)
            #expect(error.description.hasPrefix("app.csv:7: start: "))
            #expect(!error.description.contains("P-"))
        }
        #expect(ImportRefusal.noConsent.error().code == .policy)
        #expect(ImportRefusal.reconsentDue.message.contains("re-consent"))
    }

    @Test func unknownTimeZoneIsReportedWithTheParticipantCode() throws {
        let subject = try Fixture.subject("P-0077", zone: "Mars/Olympus", enrolled: "2025-03-10")
        let error = try #require(throws: CohortError.self) { try rules.importGate(for: subject, history: []) }
        #expect(error.message.contains("P-0077"))
    }
}

struct ConsentStatusRowTests {
    @Test func rowsRenderAsTableAndCSV() throws {
        let rules = ConsentRules(studyProtocol: Fixture.studyProtocol())
        let active = try Fixture.subject("P-0001", zone: "Asia/Kolkata", enrolled: "2025-03-10")
        let signedAt = try Fixture.at("2025-03-10 01:00", "Asia/Kolkata")  // 03-09 in UTC
        let consent = Consent(
            id: UUID(), participantID: active.id, version: "1.0", documentSHA256: ConsentRulesTests.digest, signedAt: signedAt,
            signatureKind: .drawn, sharing: .broad, status: .active, recordedAt: signedAt)
        let none = try Fixture.subject("P-0002", zone: "UTC", enrolled: "2025-03-10")
        let gone = try Fixture.subject("P-0003", zone: "UTC", enrolled: "2025-03-10", status: .excluded)
        let rows = [
            try rules.statusRow(for: active, history: [consent]), try rules.statusRow(for: none, history: [consent]),
            try rules.statusRow(for: gone, history: []),
        ]
        #expect(
            ConsentStatusRow.csvRows(rows) == [
                ["participant", "version", "signed_on", "sharing", "status", "withdrawal", "reconsent_due", "audiences", "data_types"],
                ["P-0001", "1.0", "2025-03-10", "broad", "active", "", "true", "external;study-team", "symptom_log;biometric"],
                ["P-0002", "", "", "", "none", "", "false", "", ""],
                ["P-0003", "", "", "", "withdrawn", "exclude", "false", "", ""],
            ])
        let text = ConsentStatusRow.table(rows).render()
        #expect(text.hasPrefix("participant  version  signed on   sharing  status     withdrawal  re-consent due  exportable to"))
        #expect(text.contains("P-0002       -        -           -        none       -           no              none"))
    }
}
