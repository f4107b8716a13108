import CohortCore
import Foundation
import GRDB

/// A `withdrawals` row (selected with `rowid AS row_id`), decoded strictly. `actor` and `reason`
/// are redactable references (see `StudyStore+Redactable`), revealed by the store.
struct WithdrawalRow: FetchableRecord, TableRecord {
    static let databaseTableName = "withdrawals"

    var id: UUID
    var participantPK: Int64
    var mode: WithdrawalMode
    var atMs: Int64
    /// `participant` or `staff`.
    var byKind: String
    var actor: String
    var reason: String?
    var consentVersion: String?
    var counts: WithdrawalCounts

    init(row: Row) throws {
        let r = RowReader(row, table: Self.databaseTableName)
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
