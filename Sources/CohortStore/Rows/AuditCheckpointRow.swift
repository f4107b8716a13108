package import CohortCore

/// An `audit_checkpoints` row, decoded strictly.
package struct AuditCheckpointRow: Sendable {
    package static let databaseTableName = "audit_checkpoints"

    package var seq: Int64
    package var headHash: String
    /// Base64 of the Ed25519 signature over ``AuditCheckpoint/message(seq:headHash:)``.
    package var signature: String
    package var at: String

    /// Decodes the row `r` reads (either store's).
    package init(_ r: some ColumnReader) throws {
        seq = try r.int64("seq")
        headHash = try r.string("head_hash")
        signature = try r.string("signature")
        at = try r.string("at")
    }

    package var checkpoint: AuditCheckpoint { AuditCheckpoint(seq: seq, headHash: headHash, signature: signature) }
}
