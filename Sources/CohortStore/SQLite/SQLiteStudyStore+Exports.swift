public import Foundation
import GRDB

extension SQLiteStudyStore {
    /// Appends `export.create` unless a participant in `participantIDs` withdrew in exclude or
    /// erase mode after the audit event `snapshotSeq` (the export's `export.begin`).
    ///
    /// The check and the append are one write transaction, so a withdrawal either commits before
    /// it (and is seen) or after the export's audit event (and the export legitimately preceded it).
    public func commitExport(
        snapshotSeq: Int64, participantIDs: Set<UUID>, actor: String, subject: String?, details: [String: String], at: Date
    ) throws -> ExportCommitResult {
        try write { db in
            let rows = try AuditEventRow.fetchAll(
                db,
                sql: """
                    SELECT * FROM audit_events
                    WHERE seq > ? AND action = 'participant.withdraw' AND json_valid(details) AND json_extract(details, '$.mode') IN ('exclude', 'erase')
                    ORDER BY seq
                    """, arguments: [snapshotSeq])
            var withdrawn: [UUID] = []
            for row in rows {
                guard let text = row.event.subject, let id = UUID(uuidString: text), participantIDs.contains(id), !withdrawn.contains(id)
                else { continue }
                withdrawn.append(id)
            }
            if !withdrawn.isEmpty { return .withdrawnSinceSnapshot(withdrawn) }
            return .committed(try self.appendEvent(db, actor: actor, action: "export.create", subject: subject, details: details, at: at))
        }
    }

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
