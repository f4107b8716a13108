import Foundation
import GRDB

/// The one `study` row, decoded strictly.
struct StudyRow: FetchableRecord, TableRecord {
    static let databaseTableName = "study"

    var studyID: String
    var createdAt: String

    init(row: Row) throws {
        let r = RowReader(row, table: Self.databaseTableName, rowIDColumn: "singleton")
        studyID = try r.string("study_id")
        createdAt = try r.string("created_at")
    }
}
