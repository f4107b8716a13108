public import CohortCompliance
public import CohortCore
import CohortCrypto
import CohortStore
import Foundation

/// Who asks for a withdrawal.
public enum WithdrawalRequester: Sendable {
    /// The participant, proving it with their one-time token.
    case participant(token: String)
    /// Study staff, with a reason.
    case staff(reason: String)
}

/// What a withdrawal did (or, for a dry run, would do).
public struct WithdrawalOutcome: Sendable {
    /// Nil when the participant was already withdrawn in that mode.
    public var receipt: WithdrawalReceipt?
    /// The signed receipt text, for the participant.
    public var receiptText: String?
    /// The earlier withdrawal, when the participant was already withdrawn in this mode (nothing changed).
    public var alreadyWithdrawn: ExistingWithdrawal?
    /// True when nothing was changed because a dry run was asked for.
    public var dryRun: Bool
    /// Records the participant had stored when asked (`erase` deletes them).
    public var records: Int
    /// The participant's consent entries.
    public var consents: Int
    /// The withdrawal mode asked for (`stop`, `exclude` or `erase`).
    public var mode: WithdrawalMode
}

/// `cohort withdraw`: the participant's own command (with their token) and staff's.
public struct WithdrawalService: Sendable {
    /// The workspace the participant is enrolled in.
    public let workspace: Workspace
    /// Withdrawals in `workspace`.
    public init(workspace: Workspace) { self.workspace = workspace }

    static let mismatch = CohortError(
        .security, "the participant code and withdrawal token do not match", hint: "check both; the token was given at enrollment. Nothing was changed.")

    /// Checks the request and withdraws (unless `dryRun`). A wrong token changes nothing, is
    /// audited without the token, and gets the same message whether or not the code exists.
    public func withdraw(code: String, mode: WithdrawalMode, requester: WithdrawalRequester, dryRun: Bool) throws -> WithdrawalOutcome {
        let pinned = try workspace.currentProtocol()
        let stored = try workspace.store.participant(code: code)
        if case let .participant(token) = requester {
            // Always hash and compare, also for an unknown code, so timing does not tell.
            let saltAndHash = try stored.flatMap { try workspace.store.withdrawalTokenHash($0.handle) }
            let salt = saltAndHash?.salt ?? Array(repeating: 0, count: 16)
            let expected = saltAndHash?.hash ?? Array(repeating: 0xFF, count: 32)
            let ok = constantTimeEquals(Roster.tokenHash(token, salt: salt), expected) && saltAndHash != nil
            guard ok else {
                try workspace.store.appendEvent(
                    actor: workspace.actor, action: "withdraw.denied", subject: stored?.participant.id.uuidString.lowercased(),
                    details: ["reason": "token mismatch", "mode": mode.rawValue], at: workspace.now())
                try workspace.checkpoint()
                throw Self.mismatch
            }
        }
        guard let stored else {
            throw CohortError(.notFound, "no enrolled participant has study code \(code)", hint: "see `cohort participant list`")
        }
        if case let .staff(reason) = requester, reason.trimmingCharacters(in: .whitespaces).isEmpty {
            throw CohortError.invalid("staff withdrawals need a reason", field: "reason", hint: "pass --reason \"…\" (no identifiers in it: it is audited)")
        }
        let p = stored.participant
        let zone = TimeZone(identifier: p.timeZone) ?? .gmt
        let now = Timestamp(workspace.now(), in: zone)
        let records = try workspace.store.recordCount(stored.handle)
        let history = try workspace.store.consentHistory(stored.handle, participantID: p.id)
        switch try WithdrawalPlan.decide(status: p.status, withdrawnAt: p.withdrawnAt, requested: mode, now: now) {
        case let .alreadyWithdrawn(existing):
            return WithdrawalOutcome(alreadyWithdrawn: existing, dryRun: dryRun, records: records, consents: history.count, mode: mode)
        case let .proceed(plan):
            if dryRun {
                return WithdrawalOutcome(dryRun: true, records: records, consents: history.count, mode: mode)
            }
            let consent = ConsentRules(studyProtocol: pinned.studyProtocol).consentInForce(in: history, participantID: p.id)
                ?? history.last
            let receiptID = UUID()
            let byParticipant: Bool
            let reason: String?
            switch requester {
            case .participant: (byParticipant, reason) = (true, nil)
            case let .staff(r): (byParticipant, reason) = (false, r)
            }
            let counts = try workspace.store.withdraw(
                stored.handle, participantID: p.id, mode: mode, at: plan.withdrawnAt, by: byParticipant ? "participant" : "staff",
                actor: byParticipant ? "participant" : workspace.actor, reason: reason, consentVersion: consent?.version, receiptID: receiptID)
            try workspace.checkpoint()
            let receipt = WithdrawalReceipt(
                plan: plan, studyProtocol: pinned.studyProtocol, participantCode: p.code, receiptID: receiptID, issuedAt: now,
                requestedBy: byParticipant ? .participant : .staff, consentVersion: consent?.version,
                counts: .init(
                    recordsDeleted: mode == .erase ? counts.records : 0, recordsRetained: mode == .erase ? 0 : counts.records,
                    identifiersDeleted: mode == .erase ? 1 : 0, consentsRetained: counts.consents))
            let text = try ReceiptDocument.make(receipt, studyProtocol: pinned.studyProtocol, signingKey: workspace.keystore.signingKey, signerSite: try workspace.signingScope()?.site)
            return WithdrawalOutcome(receipt: receipt, receiptText: text, dryRun: false, records: records, consents: history.count, mode: mode)
        }
    }
}
