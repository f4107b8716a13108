import CohortCore
import Foundation
import GRDB

/// An `audit_events` row, decoded strictly.
struct AuditEventRow: FetchableRecord, TableRecord {
    static let databaseTableName = "audit_events"

    var event: AuditEvent

    init(row: Row) throws {
        let reader = RowReader(row, table: Self.databaseTableName, rowIDColumn: "seq")
        let detailsText = try reader.string("details")
        guard let details = try? JSONDecoder().decode([String: String].self, from: Data(detailsText.utf8)) else {
            throw reader.problem("details", expected: "a JSON object of strings")
        }
        event = AuditEvent(
            seq: try reader.int64("seq"), at: try reader.string("at"), actor: try reader.string("actor"), action: try reader.string("action"),
            subject: try reader.optionalString("subject"), details: details, prevHash: try reader.string("prev_hash"), hash: try reader.string("hash"))
    }
}
