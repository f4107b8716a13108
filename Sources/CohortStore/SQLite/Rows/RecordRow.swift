import CohortCore
import Foundation
import GRDB

/// A `records` row, decoded strictly (the note stays sealed until the store opens it). Selected
/// by ``columns`` (the legacy plaintext `note` column is empty since migration v2). The table has
/// no rowid since migration `v6-records-by-key`: errors name a row by its participant row.
struct RecordRow: FetchableRecord, TableRecord {
    static let databaseTableName = "records"
    /// The columns a record is read from.
    static let columns = "participant_pk, kind, start_ms, start_offset, end_ms, end_offset, value, text, source, note_enc, batch_id"

    var participantPK: Int64
    var kind: RecordKind
    var start: Timestamp
    var end: Timestamp?
    var value: Double?
    var text: String?
    /// The source (`''` when the record has none: the column is NOT NULL).
    var source: String
    var sealedNote: [UInt8]?
    var batchID: Int64?
}

extension RecordRow {
    init(row: Row) throws {
        let r = RowReader(recordRow: row)
        participantPK = try r.int64("participant_pk")
        kind = try r.choice("kind", RecordKind.self)
        start = Timestamp(epochMilliseconds: try r.int64("start_ms"), utcOffsetSeconds: try r.offset("start_offset"))
        end = try r.optionalInt64("end_ms").map { Timestamp(epochMilliseconds: $0, utcOffsetSeconds: try r.offset("end_offset")) }
        value = try r.optionalDouble("value")
        text = try r.optionalString("text")
        source = try r.string("source")
        sealedNote = try r.optionalBytes("note_enc")
        batchID = try r.optionalInt64("batch_id")
    }
}
