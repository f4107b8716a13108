public import CohortCore

/// What a withdrawal request does, decided from the participant's current status.
///
/// Escalation stop → exclude → erase is allowed (also skipping a step); de-escalation is
/// refused with an error; repeating the current mode is not an error but reports the
/// existing withdrawal (`WithdrawalDecision.alreadyWithdrawn`).
package struct WithdrawalPlan: Sendable, Hashable {
    /// The mode the participant was already withdrawn in, if any.
    package var previousMode: WithdrawalMode?
    /// The requested mode.
    public var mode: WithdrawalMode
    /// The withdrawal instant to record. An escalation keeps the first withdrawal's instant
    /// (when known): data was already refused from then on, and compliance stops there.
    package var withdrawnAt: Timestamp
    /// Everything `mode` requires, in total.
    package var effects: WithdrawalEffects
    /// What this step adds to what the previous mode already required (what to do now).
    package var newEffects: WithdrawalEffects

    /// Creates a plan (use `decide` to get one from a request).
    package init(previousMode: WithdrawalMode?, mode: WithdrawalMode, withdrawnAt: Timestamp) {
        self.previousMode = previousMode
        self.mode = mode
        self.withdrawnAt = withdrawnAt
        self.effects = WithdrawalEffects(mode)
        self.newEffects = effects.adding(over: previousMode.map(WithdrawalEffects.init) ?? .none)
    }

    /// The participant status after the withdrawal.
    package var newStatus: ParticipantStatus { mode.status }

    /// Whether the participant was already withdrawn in a milder mode.
    package var isEscalation: Bool { previousMode != nil }

    /// Decides what withdrawing a participant in `status` (withdrawn at `withdrawnAt`, if
    /// they are) in mode `requested` at `now` does. Throws a `conflict` error for a
    /// de-escalation.
    package static func decide(
        status: ParticipantStatus, withdrawnAt: Timestamp?, requested: WithdrawalMode, now: Timestamp
    ) throws -> WithdrawalDecision {
        guard let current = status.withdrawalMode else {
            return .proceed(WithdrawalPlan(previousMode: nil, mode: requested, withdrawnAt: now))
        }
        if current == requested {
            return .alreadyWithdrawn(ExistingWithdrawal(mode: current, withdrawnAt: withdrawnAt))
        }
        guard current < requested else {
            throw CohortError(
                .conflict, "the participant is already withdrawn in \(current.rawValue) mode, which goes further than \(requested.rawValue)",
                at: .init(field: "mode"),
                hint: "a withdrawal can only be escalated (stop → exclude → erase), never reversed; nothing was changed")
        }
        return .proceed(WithdrawalPlan(previousMode: current, mode: requested, withdrawnAt: withdrawnAt ?? now))
    }
}

/// The outcome of a withdrawal request.
package enum WithdrawalDecision: Sendable, Hashable {
    /// Carry out the plan.
    case proceed(WithdrawalPlan)
    /// The participant is already withdrawn in the requested mode: nothing to do; report it.
    case alreadyWithdrawn(ExistingWithdrawal)
}

/// A withdrawal already on record.
public struct ExistingWithdrawal: Sendable, Hashable, Codable {
    /// Its mode.
    public var mode: WithdrawalMode
    /// When it happened, when known.
    public var withdrawnAt: Timestamp?

    /// Creates a record of an existing withdrawal.
    package init(mode: WithdrawalMode, withdrawnAt: Timestamp?) {
        self.mode = mode
        self.withdrawnAt = withdrawnAt
    }

    /// A sentence for the person who asked, without identifier values.
    public var message: String {
        let when = withdrawnAt.map { " on \($0.iso8601)" } ?? ""
        return "the participant already withdrew in \(mode.rawValue) mode\(when); nothing was changed"
    }

    enum CodingKeys: String, CodingKey {
        case mode
        case withdrawnAt = "withdrawn_at"
    }
}
