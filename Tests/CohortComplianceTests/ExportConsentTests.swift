import CohortCore
import Foundation
import Testing

@testable import CohortCompliance

/// The export's consent decision, one rule per test: each fails if its rule is taken out of
/// ``ConsentRules/exportDecision(for:history:audience:collected:)`` or ``ConsentCoverage``.
struct ExportConsentTests {
    let zone = "Europe/Berlin"
    let id = UUID()

    /// The fixture protocol (versions 1.0, 1.1, 2.0; symptom_log and biometric), with `edit` applied to its consent policy.
    func rules(_ edit: (inout ConsentPolicy) -> Void = { _ in }) -> ConsentRules {
        var p = Fixture.studyProtocol()
        edit(&p.consent)
        return ConsentRules(studyProtocol: p)
    }

    func consent(_ version: String, _ signed: String, sharing: SharingScope = .broad, status: ConsentStatus = .active) throws -> Consent {
        let at = try Fixture.at(signed, zone)
        return Consent(
            id: UUID(), participantID: id, version: version, documentSHA256: String(repeating: "ab", count: 32), signedAt: at,
            signatureKind: .typed, sharing: sharing, status: status, recordedAt: at)
    }

    func subject(_ status: ParticipantStatus = .active) throws -> ComplianceSubject {
        try Fixture.subject(zone: zone, enrolled: "2025-03-01", status: status, id: id)
    }

    func decide(_ rules: ConsentRules, _ history: [Consent], audience: ExportAudience = .external, status: ParticipantStatus = .active) throws
        -> ExportConsentDecision
    {
        rules.exportDecision(for: try subject(status), history: history, audience: audience, collected: [.symptomLog, .biometric])
    }

    func leftOut(_ decision: ExportConsentDecision) -> ExportConsentReason? {
        if case .leftOut(let reason) = decision { return reason }
        return nil
    }

    func coverage(_ decision: ExportConsentDecision) -> ConsentCoverage? {
        if case .included(let coverage) = decision { return coverage }
        return nil
    }

    func ms(_ text: String) throws -> Int64 { try Fixture.at(text, zone).epochMilliseconds }

    @Test func noConsentLeavesTheParticipantOut() throws {
        #expect(leftOut(try decide(rules(), [])) == .noConsent)
        // Another participant's consent is not theirs.
        var other = try consent("2.0", "2025-03-01 10:00")
        other.participantID = UUID()
        #expect(leftOut(try decide(rules(), [other])) == .noConsent)
    }

    @Test func aWithdrawnConsentIsNotInForce() throws {
        let withdrawn = try consent("2.0", "2025-03-01 10:00", status: .withdrawn)
        #expect(leftOut(try decide(rules(), [withdrawn])) == .noConsent)
        // A participant who stopped keeps the data they gave under that last consent (`stop`).
        #expect(coverage(try decide(rules(), [withdrawn], status: .stopped))?.inForce.version == "2.0")
    }

    @Test func aSupersededConsentWithoutANewerOneIsNotInForce() throws {
        let superseded = try consent("2.0", "2025-03-01 10:00", status: .superseded)
        #expect(leftOut(try decide(rules(), [superseded])) == .noConsent)
        let newer = try consent("2.0", "2025-03-05 10:00")
        #expect(coverage(try decide(rules(), [superseded, newer])) != nil)
    }

    @Test func aVersionTheProtocolNoLongerAcceptsLeavesTheParticipantOut() throws {
        let old = try consent("1.0", "2025-03-01 10:00")
        #expect(coverage(try decide(rules(), [old])) != nil)
        let retired = rules { $0.documents[0].accepted = false }
        #expect(leftOut(try decide(retired, [old])) == .versionNotAccepted)
        // A version the protocol does not list at all is not accepted either.
        #expect(leftOut(try decide(rules(), [try consent("9.9", "2025-03-01 10:00")])) == .versionNotAccepted)
    }

    @Test(arguments: [
        (SharingScope.broad, ExportAudience.external, true), (.broad, .studyTeam, true), (.studyOnly, .external, false),
        (.studyOnly, .studyTeam, true), (.noSharing, .external, false), (.noSharing, .studyTeam, false),
    ])
    func sharingScopeDecidesTheAudience(scope: SharingScope, audience: ExportAudience, included: Bool) throws {
        let decision = try decide(rules(), [try consent("2.0", "2025-03-01 10:00", sharing: scope)], audience: audience)
        #expect((coverage(decision) != nil) == included)
        if !included { #expect(leftOut(decision) == .scope) }
    }

    @Test func aProtocolDefinesScopesAndTheirAudiences() throws {
        let custom = SharingScope(rawValue: "sponsors-only")
        let scope = try #require(custom)
        let history = [try consent("2.0", "2025-03-01 10:00", sharing: scope)]
        // Unknown to the protocol: allows nobody.
        #expect(leftOut(try decide(rules(), history, audience: .studyTeam)) == .scope)
        let defined = rules { $0.sharingScopes[scope] = [.studyTeam] }
        #expect(coverage(try decide(defined, history, audience: .studyTeam)) != nil)
        #expect(leftOut(try decide(defined, history, audience: .external)) == .scope)
        // A protocol may also narrow a built-in scope.
        let narrowed = rules { $0.sharingScopes[.broad] = [.studyTeam] }
        #expect(leftOut(try decide(narrowed, [try consent("2.0", "2025-03-01 10:00")])) == .scope)
    }

    @Test func theVersionDecidesWhichDataTypesArePublished() throws {
        let symptomsOnly = rules { $0.documents[2].covers = [.symptomLog] }
        let c = try #require(coverage(try decide(symptomsOnly, [try consent("2.0", "2025-03-01 10:00")])))
        #expect(c.refusal(for: .symptomLog, atMilliseconds: try ms("2025-03-10 08:00")) == nil)
        #expect(c.refusal(for: .biometric, atMilliseconds: try ms("2025-03-10 08:00")) == .notCovered)
    }

    /// Every data type is its own bit in a segment (issue 28, ninth round): a version covering
    /// every other type, with every type collected, covers exactly those — each type's refusal
    /// and `alwaysCovers` agree with the version's list, whatever its place among the cases.
    @Test(arguments: [0, 1]) func eachDataTypeIsCoveredOnItsOwn(parity: Int) throws {
        let covered = DataType.allCases.enumerated().filter { $0.offset % 2 == parity }.map(\.element)
        let alternate = rules { $0.documents[2].covers = covered }
        let history = [try consent("2.0", "2025-03-01 10:00")]
        let decision = alternate.exportDecision(for: try subject(), history: history, audience: .external, collected: Set(DataType.allCases))
        let c = try #require(coverage(decision))
        for type in DataType.allCases {
            let expected = covered.contains(type)
            #expect((c.refusal(for: type, atMilliseconds: try ms("2025-03-10 08:00")) == nil) == expected, "\(type)")
            #expect(c.alwaysCovers(type) == expected, "\(type)")
        }
    }

    @Test func aReconsentCoversDataFromItsSigningOnUnlessRetroactive() throws {
        // 1.1 covers symptoms only; 2.0 (signed on the 10th) covers both.
        var edit: (inout ConsentPolicy) -> Void = { $0.documents[1].covers = [.symptomLog] }
        let history = [try consent("1.1", "2025-03-01 10:00", status: .superseded), try consent("2.0", "2025-03-10 10:00")]
        let c = try #require(coverage(try decide(rules(edit), history)))
        #expect(c.inForce.version == "2.0")
        #expect(c.refusal(for: .biometric, atMilliseconds: try ms("2025-03-05 08:00")) == .notCovered)  // under 1.1
        #expect(c.refusal(for: .biometric, atMilliseconds: try ms("2025-03-01 08:00")) == .notCovered)  // before any signature: the first consent
        #expect(c.refusal(for: .biometric, atMilliseconds: try ms("2025-03-10 10:00")) == nil)  // from 2.0's signing on
        #expect(c.refusal(for: .symptomLog, atMilliseconds: try ms("2025-03-05 08:00")) == nil)
        edit = {
            $0.documents[1].covers = [.symptomLog]
            $0.documents[2].retroactive = true
        }
        let retro = try #require(coverage(try decide(rules(edit), history)))
        #expect(retro.refusal(for: .biometric, atMilliseconds: try ms("2025-03-05 08:00")) == nil)
        #expect(retro.refusal(for: .biometric, atMilliseconds: try ms("2025-03-01 08:00")) == nil)
    }

    @Test func recordsGovernedByAVersionNoLongerAcceptedAreLeftOut() throws {
        let retired = rules { $0.documents[1].accepted = false }
        let history = [try consent("1.1", "2025-03-01 10:00", status: .superseded), try consent("2.0", "2025-03-10 10:00")]
        let c = try #require(coverage(try decide(retired, history)))
        #expect(c.refusal(for: .symptomLog, atMilliseconds: try ms("2025-03-05 08:00")) == .versionNotAccepted)
        #expect(c.refusal(for: .symptomLog, atMilliseconds: try ms("2025-03-12 08:00")) == nil)
    }

    @Test func recordingAScopeTheProtocolDoesNotDefineIsRefused() throws {
        let subject = try subject()
        let unknown = try #require(SharingScope(rawValue: "everyone"))
        let draft = ConsentDraft(
            version: "2.0", documentSHA256: String(repeating: "ab", count: 32), signedAt: try Fixture.at("2025-03-01 10:00", zone),
            signatureKind: .typed, sharing: unknown)
        let error = try #require(throws: CohortError.self) {
            try rules().validateNewConsent(draft, for: subject, history: [], now: try Fixture.at("2025-03-02 10:00", zone).date, id: UUID())
        }
        #expect(error.location?.field == "sharing")
        #expect(error.hint?.contains("broad, no-sharing, study-only") == true)
    }

    @Test(arguments: ["broad", "study-only", "a", "x-1"]) func scopeNamesAreLowerCaseWords(name: String) {
        #expect(SharingScope(rawValue: name)?.rawValue == name)
    }

    @Test(arguments: ["", "Broad", "1st", "no sharing", "-x", String(repeating: "a", count: 33)]) func otherScopeNamesAreRefused(name: String) {
        #expect(SharingScope(rawValue: name) == nil)
    }
}
