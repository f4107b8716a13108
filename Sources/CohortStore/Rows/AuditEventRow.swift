/// An `audit_events` row, decoded strictly.
package struct AuditEventRow: Sendable {
    package static let databaseTableName = "audit_events"

    package var event: AuditEvent

    /// Decodes the row `reader` reads (either store's); `detailsColumn` holds the canonical JSON
    /// the event's hash commits to (PostgreSQL: `details_text`).
    package init(_ reader: some ColumnReader, detailsColumn: String = "details") throws {
        let details = try reader.stringMap(detailsColumn)
        event = AuditEvent(
            seq: try reader.int64("seq"), at: try reader.string("at"), actor: try reader.string("actor"), action: try reader.string("action"),
            subject: try reader.optionalString("subject"), details: details, prevHash: try reader.string("prev_hash"), hash: try reader.string("hash"))
    }
}
