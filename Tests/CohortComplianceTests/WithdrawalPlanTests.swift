import CohortCore
import Foundation
import Testing

@testable import CohortCompliance

struct WithdrawalPlanTests {
    let now = Timestamp(epochMilliseconds: 1_750_000_000_000, utcOffsetSeconds: 7200)
    let earlier = Timestamp(epochMilliseconds: 1_740_000_000_000, utcOffsetSeconds: 3600)

    static let escalations: [(WithdrawalMode, WithdrawalMode)] = [(.stop, .exclude), (.stop, .erase), (.exclude, .erase)]

    @Test(arguments: WithdrawalMode.allCases)
    func anActiveParticipantCanWithdrawInAnyMode(mode: WithdrawalMode) throws {
        let decision = try WithdrawalPlan.decide(status: .active, withdrawnAt: nil, requested: mode, now: now)
        guard case .proceed(let plan) = decision else {
            Issue.record("expected a plan")
            return
        }
        #expect(plan.withdrawnAt == now)
        #expect(plan.previousMode == nil && !plan.isEscalation)
        #expect(plan.newStatus == mode.status)
        #expect(plan.newEffects == plan.effects)
    }

    @Test(arguments: escalations)
    func everyEscalationIsAllowedAndKeepsTheFirstWithdrawalInstant(from: WithdrawalMode, to: WithdrawalMode) throws {
        let decision = try WithdrawalPlan.decide(status: from.status, withdrawnAt: earlier, requested: to, now: now)
        guard case .proceed(let plan) = decision else {
            Issue.record("expected a plan")
            return
        }
        #expect(plan.previousMode == from && plan.mode == to && plan.isEscalation)
        #expect(plan.withdrawnAt == earlier)
        #expect(plan.newStatus == to.status)
        #expect(plan.newEffects.rejectNewData == false)  // already in force since the first withdrawal
        #expect(plan.newEffects.excludeFromExports == (from == .stop))
        #expect(plan.newEffects.deleteRecords == (to == .erase))
    }

    @Test(arguments: escalations)
    func everyDeEscalationIsRefused(lower: WithdrawalMode, higher: WithdrawalMode) throws {
        let error = try #require(throws: CohortError.self) {
            try WithdrawalPlan.decide(status: higher.status, withdrawnAt: earlier, requested: lower, now: now)
        }
        #expect(error.code == .conflict)
        #expect(error.message.contains(higher.rawValue) && error.message.contains(lower.rawValue))
        #expect(error.hint?.contains("stop → exclude → erase") == true)
    }

    @Test(arguments: WithdrawalMode.allCases)
    func withdrawingTwiceInTheSameModeReportsTheExistingWithdrawal(mode: WithdrawalMode) throws {
        let decision = try WithdrawalPlan.decide(status: mode.status, withdrawnAt: earlier, requested: mode, now: now)
        #expect(decision == .alreadyWithdrawn(ExistingWithdrawal(mode: mode, withdrawnAt: earlier)))
        if case .alreadyWithdrawn(let existing) = decision {
            #expect(existing.message.contains(mode.rawValue) && existing.message.contains(earlier.iso8601))
        }
    }

    @Test func eachModeRequiresItsEffects() {
        #expect(WithdrawalEffects(.stop) == .init(rejectNewData: true, excludeFromExports: false, deleteRecords: false, deleteIdentifiers: false))
        #expect(WithdrawalEffects(.exclude) == .init(rejectNewData: true, excludeFromExports: true, deleteRecords: false, deleteIdentifiers: false))
        #expect(WithdrawalEffects(.erase) == .init(rejectNewData: true, excludeFromExports: true, deleteRecords: true, deleteIdentifiers: true))
    }
}

struct WithdrawalReceiptTests {
    func receipt() throws -> WithdrawalReceipt {
        let plan = WithdrawalPlan(previousMode: .stop, mode: .erase, withdrawnAt: Timestamp(epochMilliseconds: 1_740_000_000_000, utcOffsetSeconds: 3600))
        return WithdrawalReceipt(
            plan: plan, studyProtocol: Fixture.studyProtocol(), participantCode: "P-0007",
            receiptID: try #require(UUID(uuidString: "00000000-0000-4000-8000-000000000001")),
            issuedAt: Timestamp(epochMilliseconds: 1_750_000_000_000), requestedBy: .participant, consentVersion: nil,
            counts: .init(recordsDeleted: 120, recordsRetained: 0, identifiersDeleted: 5, consentsRetained: 2))
    }

    @Test func canonicalBytesAreSortedCompactJSONWithEveryKey() throws {
        let text = try #require(String(data: try receipt().canonicalBytes(), encoding: .utf8))
        #expect(
            text
                == #"{"consent_version":null,"counts":{"consents_retained":2,"identifiers_deleted":5,"records_deleted":120,"records_retained":0},"issued_at":"2025-06-15T15:06:40Z","mode":"erase","participant_code":"P-0007","previous_mode":"stop","protocol_revision":3,"receipt_id":"00000000-0000-4000-8000-000000000001","requested_by":"participant","schema":"cohort/withdrawal-receipt@1","study_id":"axspa-test","withdrawn_at":"2025-02-19T22:20:00+01:00"}"#
        )
    }

    @Test func receiptRoundTripsAndBytesAreStable() throws {
        let original = try receipt()
        let bytes = try original.canonicalBytes()
        let decoded = try JSONDecoder().decode(WithdrawalReceipt.self, from: bytes)
        #expect(decoded == original)
        #expect(try decoded.canonicalBytes() == bytes)
    }
}
