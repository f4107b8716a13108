import CohortPostgres
public import CohortStore
import Foundation

/// The export's audit look-ups on PostgreSQL, through the `details` jsonb column.
extension PostgresStudyStore {

    /// The `export.*` events whose `export_id` detail is `exportID`, oldest first.
    public func exportEvents(exportID: String) throws -> [AuditEvent] {
        try reading { conn in
            try events(conn, where: "action LIKE 'export.%' AND details->>'export_id' = $1", [.text(exportID)], revealing: false)
        }
    }

    /// The events with `action`, oldest first.
    public func auditEvents(action: String) throws -> [AuditEvent] {
        try reading { conn in try events(conn, where: "action = $1", [.text(action)], revealing: false) }
    }

    /// The `export.create` events that name `sha256` as their archive's digest, oldest first.
    public func exportCreateEvents(archiveSHA256 sha256: String) throws -> [AuditEvent] {
        try reading { conn in
            try events(conn, where: "action = 'export.create' AND details->>'archive_sha256' = $1", [.text(sha256.lowercased())], revealing: false)
        }
    }
}
