import Foundation
import GRDB

extension SQLiteStudyStore {

    /// The `export.*` events whose `export_id` detail is `exportID`, oldest first.
    public func exportEvents(exportID: String) throws -> [AuditEvent] {
        try read { db in
            try AuditEventRow.fetchAll(
                db,
                sql: "SELECT * FROM audit_events WHERE action LIKE 'export.%' AND json_valid(details) AND json_extract(details, '$.export_id') = ? ORDER BY seq",
                arguments: [exportID]
            ).map(\.event)
        }
    }

    /// The events with `action`, oldest first.
    public func auditEvents(action: String) throws -> [AuditEvent] {
        try read { db in
            try AuditEventRow.fetchAll(db, sql: "SELECT * FROM audit_events WHERE action = ? ORDER BY seq", arguments: [action]).map(\.event)
        }
    }

    /// The `export.create` events that name `sha256` as their archive's digest, oldest first.
    public func exportCreateEvents(archiveSHA256 sha256: String) throws -> [AuditEvent] {
        try read { db in
            try AuditEventRow.fetchAll(
                db,
                sql: "SELECT * FROM audit_events WHERE action = 'export.create' AND json_valid(details) AND json_extract(details, '$.archive_sha256') = ? ORDER BY seq",
                arguments: [sha256.lowercased()]
            ).map(\.event)
        }
    }
}
