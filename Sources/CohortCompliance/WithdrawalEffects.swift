package import CohortCore

/// What a withdrawal mode requires of the store and the exporters. Modes are cumulative:
/// each includes everything the milder modes require.
package struct WithdrawalEffects: Sendable, Hashable, Codable {
    /// Refuse every new record from the withdrawal instant on.
    package var rejectNewData: Bool
    /// Leave the participant out of every later export.
    package var excludeFromExports: Bool
    /// Delete the participant's records.
    package var deleteRecords: Bool
    /// Delete the participant's direct identifiers (consent rows and pseudonymous audit events stay).
    package var deleteIdentifiers: Bool

    /// Creates a set of effects.
    package init(rejectNewData: Bool, excludeFromExports: Bool, deleteRecords: Bool, deleteIdentifiers: Bool) {
        self.rejectNewData = rejectNewData
        self.excludeFromExports = excludeFromExports
        self.deleteRecords = deleteRecords
        self.deleteIdentifiers = deleteIdentifiers
    }

    /// No effect at all (an active participant).
    public static let none = WithdrawalEffects(rejectNewData: false, excludeFromExports: false, deleteRecords: false, deleteIdentifiers: false)

    /// What `mode` requires, in total.
    package init(_ mode: WithdrawalMode) {
        switch mode {
        case .stop: self.init(rejectNewData: true, excludeFromExports: false, deleteRecords: false, deleteIdentifiers: false)
        case .exclude: self.init(rejectNewData: true, excludeFromExports: true, deleteRecords: false, deleteIdentifiers: false)
        case .erase: self.init(rejectNewData: true, excludeFromExports: true, deleteRecords: true, deleteIdentifiers: true)
        }
    }

    /// The effects in `self` that `previous` did not already have (what an escalation adds).
    package func adding(over previous: WithdrawalEffects) -> WithdrawalEffects {
        WithdrawalEffects(
            rejectNewData: rejectNewData && !previous.rejectNewData, excludeFromExports: excludeFromExports && !previous.excludeFromExports,
            deleteRecords: deleteRecords && !previous.deleteRecords, deleteIdentifiers: deleteIdentifiers && !previous.deleteIdentifiers)
    }

    enum CodingKeys: String, CodingKey {
        case rejectNewData = "reject_new_data"
        case excludeFromExports = "exclude_from_exports"
        case deleteRecords = "delete_records"
        case deleteIdentifiers = "delete_identifiers"
    }
}
