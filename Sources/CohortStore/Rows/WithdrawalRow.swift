package import CohortCore
package import Foundation

/// A `withdrawals` row, decoded strictly (SQLite selects `rowid AS row_id` for messages). `actor` and `reason`
/// are redactable references (see `StudyStore+Redactable`), revealed by the store.
package struct WithdrawalRow: Sendable {
    package static let databaseTableName = "withdrawals"

    package var id: UUID
    package var participantPK: Int64
    package var mode: WithdrawalMode
    package var atMs: Int64
    /// `participant` or `staff`.
    package var byKind: String
    package var actor: String
    package var reason: String?
    package var consentVersion: String?
    package var counts: WithdrawalCounts

    /// Decodes the row `r` reads (either store's).
    package init(_ r: some ColumnReader) throws {
        id = try r.uuid("id")
        participantPK = try r.int64("participant_pk")
        mode = try r.choice("mode", WithdrawalMode.self)
        atMs = try r.int64("at_ms")
        byKind = try r.string("by_kind")
        guard byKind == "participant" || byKind == "staff" else { throw r.problem("by_kind", expected: "one of participant, staff") }
        actor = try r.string("actor")
        reason = try r.optionalString("reason")
        consentVersion = try r.optionalString("consent_version")
        guard let counts = try? JSONDecoder().decode(WithdrawalCounts.self, from: Data(try r.string("counts_json").utf8)) else {
            throw r.problem("counts_json", expected: "a JSON object with records, consents and identifiers_erased")
        }
        self.counts = counts
    }
}
