import Foundation
import GRDB

/// An `import_batches` row, decoded strictly. `actor` is a redactable reference.
struct ImportBatchRow: FetchableRecord, TableRecord {
    static let databaseTableName = "import_batches"

    var id: Int64
    var fileName: String
    var fileSHA256: String
    var format: String
    var importedAt: String
    var actor: String
    var rowsTotal: Int64
    var rowsInserted: Int64
    var rowsDuplicate: Int64
    var rowsRejected: Int64

    init(row: Row) throws {
        let r = RowReader(row, table: Self.databaseTableName, rowIDColumn: "id")
        id = try r.int64("id")
        fileName = try r.string("file_name")
        fileSHA256 = try r.string("file_sha256")
        format = try r.string("format")
        importedAt = try r.string("imported_at")
        actor = try r.string("actor")
        rowsTotal = try r.int64("rows_total")
        rowsInserted = try r.int64("rows_inserted")
        rowsDuplicate = try r.int64("rows_duplicate")
        rowsRejected = try r.int64("rows_rejected")
    }
}
