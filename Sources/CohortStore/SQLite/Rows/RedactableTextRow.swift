import CohortCore
import Foundation
import GRDB

/// A `redactable_texts` row (selected with `rowid AS row_id`), decoded strictly; the text stays
/// sealed under pii.key.
struct RedactableTextRow: FetchableRecord, TableRecord {
    static let databaseTableName = "redactable_texts"

    var rowID: Int64?
    var digest: String
    var participantID: String?
    var salt: [UInt8]
    var sealedText: [UInt8]

    init(row: Row) throws {
        let r = RowReader(row, table: Self.databaseTableName)
        rowID = r.rowID
        digest = try r.string("digest")
        participantID = try r.optionalString("participant_id")
        guard let salt = try r.optionalBytes("salt") else { throw r.problem("salt", expected: "binary data, found nothing") }
        guard let sealed = try r.optionalBytes("text_enc") else { throw r.problem("text_enc", expected: "binary data, found nothing") }
        self.salt = salt
        sealedText = sealed
    }

    /// The error for `column` of this row, for checks after decoding.
    func problem(_ column: String, expected: String) -> CohortError {
        RowReader.problem(table: Self.databaseTableName, rowID: rowID, column: column, expected: expected)
    }
}
