import CohortPostgres
public import CohortStore
public import Foundation

/// The export's audit look-ups on PostgreSQL, through the `details` jsonb column.
extension PostgresStudyStore {
    /// Appends `export.create` unless a participant in `participantIDs` withdrew in exclude or
    /// erase mode after the audit event `snapshotSeq` (the export's `export.begin`).
    ///
    /// The check and the append run under the audit lock in one transaction: a withdrawal's
    /// event is appended under the same lock, so it either committed before the check (and is
    /// seen) or is appended after `export.create` (and the export legitimately preceded it).
    public func commitExport(
        snapshotSeq: Int64, participantIDs: Set<UUID>, actor: String, subject: String?, details: [String: String], at: Date
    ) throws -> ExportCommitResult {
        try change { conn in
            try lockAuditChain(conn)
            let withdrawals = try events(
                conn, where: "seq > $1 AND action = 'participant.withdraw' AND details->>'mode' IN ('exclude', 'erase')", [.int(snapshotSeq)],
                revealing: false)
            var withdrawn: [UUID] = []
            for event in withdrawals {
                guard let text = event.subject, let id = UUID(uuidString: text), participantIDs.contains(id), !withdrawn.contains(id) else { continue }
                withdrawn.append(id)
            }
            if !withdrawn.isEmpty { return .withdrawnSinceSnapshot(withdrawn) }
            return .committed(try appendEvent(conn, actor: actor, action: "export.create", subject: subject, details: details, at: at))
        }
    }

    /// The `export.*` events whose `export_id` detail is `exportID`, oldest first.
    public func exportEvents(exportID: String) throws -> [AuditEvent] {
        try reading { conn in
            try events(conn, where: "action LIKE 'export.%' AND details->>'export_id' = $1", [.text(exportID)], revealing: false)
        }
    }

    /// The `export.create` events that name `sha256` as their archive's digest, oldest first.
    public func exportCreateEvents(archiveSHA256 sha256: String) throws -> [AuditEvent] {
        try reading { conn in
            try events(conn, where: "action = 'export.create' AND details->>'archive_sha256' = $1", [.text(sha256.lowercased())], revealing: false)
        }
    }
}
