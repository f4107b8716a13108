import Foundation
import GRDB

/// A `templates` row (selected with `rowid AS row_id`), decoded strictly.
struct TemplateRow: FetchableRecord, TableRecord {
    static let databaseTableName = "templates"

    var protocolSHA256: String
    var path: String
    var sha256: String
    var content: Data

    init(row: Row) throws {
        let r = RowReader(row, table: Self.databaseTableName)
        protocolSHA256 = try r.string("protocol_sha256")
        path = try r.string("path")
        sha256 = try r.string("sha256")
        guard let bytes = try r.optionalBytes("content") else { throw r.problem("content", expected: "binary data, found nothing") }
        content = Data(bytes)
    }
}
