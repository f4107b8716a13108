import CohortCore
import Foundation
import GRDB

/// A `protocol_revisions` row (selected with `rowid AS row_id`), decoded strictly.
struct ProtocolRevisionRow: FetchableRecord, TableRecord {
    static let databaseTableName = "protocol_revisions"

    var sha256: String
    var studyID: String
    var revision: Int64
    /// The pinned protocol's canonical JSON (a blob; text from an older writer is accepted).
    var canonicalJSON: Data
    /// The protocol decoded from ``canonicalJSON``.
    var studyProtocol: StudyProtocol
    var sourcePath: String?
    var loadedAt: String
    var isCurrent: Bool

    init(row: Row) throws {
        let r = RowReader(row, table: Self.databaseTableName)
        sha256 = try r.string("sha256")
        studyID = try r.string("study_id")
        revision = try r.int64("revision")
        switch r.value("canonical_json").storage {
        case let .blob(data): canonicalJSON = data
        case let .string(text): canonicalJSON = Data(text.utf8)
        default: throw r.problem("canonical_json", expected: "the protocol's canonical JSON")
        }
        guard let p = try? JSONDecoder().decode(StudyProtocol.self, from: canonicalJSON) else {
            throw r.problem("canonical_json", expected: "a cohort/protocol@1 document this version of cohort reads")
        }
        studyProtocol = p
        sourcePath = try r.optionalString("source_path")
        loadedAt = try r.string("loaded_at")
        switch try r.int64("is_current") {
        case 0: isCurrent = false
        case 1: isCurrent = true
        default: throw r.problem("is_current", expected: "0 or 1")
        }
    }
}
