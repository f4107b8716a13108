import CohortCore
import Foundation
import GRDB

/// An `audit_checkpoints` row, decoded strictly.
struct AuditCheckpointRow: FetchableRecord, TableRecord {
    static let databaseTableName = "audit_checkpoints"

    var seq: Int64
    var headHash: String
    /// Base64 of the Ed25519 signature over ``AuditCheckpoint/message(seq:headHash:)``.
    var signature: String
    var at: String

    init(row: Row) throws {
        let r = RowReader(row, table: Self.databaseTableName, rowIDColumn: "seq")
        seq = try r.int64("seq")
        headHash = try r.string("head_hash")
        signature = try r.string("signature")
        at = try r.string("at")
    }

    var checkpoint: AuditCheckpoint { AuditCheckpoint(seq: seq, headHash: headHash, signature: signature) }
}
