import CohortCore
import CohortCrypto
public import Foundation
import GRDB

extension SQLiteStudyStore {

    /// The current protocol revision, or nil before one is loaded.
    public func currentProtocol() throws -> PinnedProtocol? {
        try read { db in
            try ProtocolRevisionRow.fetchOne(db, sql: "SELECT *, rowid AS row_id FROM protocol_revisions WHERE is_current = 1").map {
                try PinnedProtocol.checkPin(sha256: $0.sha256, canonicalJSON: $0.canonicalJSON, location: location)
                return PinnedProtocol(studyProtocol: $0.studyProtocol, sha256: $0.sha256, canonicalJSON: $0.canonicalJSON)
            }
        }
    }

    /// The protocol revision pinned with `sha256`, re-hashed (see ``currentProtocol()``).
    public func protocolRevision(sha256: String) throws -> PinnedProtocol? {
        try read { db in
            try ProtocolRevisionRow.fetchOne(db, sql: "SELECT *, rowid AS row_id FROM protocol_revisions WHERE sha256 = ?", arguments: [sha256]).map {
                try PinnedProtocol.checkPin(sha256: $0.sha256, canonicalJSON: $0.canonicalJSON, location: location)
                return PinnedProtocol(studyProtocol: $0.studyProtocol, sha256: $0.sha256, canonicalJSON: $0.canonicalJSON)
            }
        }
    }

    /// A template's text as pinned with protocol `sha256`.
    public func template(path: String, protocolSHA256: String) throws -> Data? {
        try read { db in
            try TemplateRow.fetchOne(
                db, sql: "SELECT *, rowid AS row_id FROM templates WHERE protocol_sha256 = ? AND path = ?", arguments: [protocolSHA256, path]
            )?.content
        }
    }
}
