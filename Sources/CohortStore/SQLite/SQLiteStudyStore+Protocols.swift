public import CohortCore
import CohortCrypto
public import Foundation
import GRDB

extension SQLiteStudyStore {
    /// Pins `loaded` (and the text of every template it names) and makes it current. A protocol
    /// for another study is refused: one workspace holds one study.
    @discardableResult
    public func pinProtocol(_ loaded: LoadedProtocol, templates: [String: Data], actor: String, at: Date) throws -> PinnedProtocol {
        let json = try loaded.canonicalJSON()
        let sha = SHA256.hex(json)
        let p = loaded.studyProtocol
        return try write { db in
            let study = try StudyRow.fetchOne(db, sql: "SELECT * FROM study")
            if let study, study.studyID != p.id {
                throw CohortError(.conflict, "this workspace holds study '\(study.studyID)', not '\(p.id)'",
                    hint: "one workspace holds one study: create another with `cohort init -w <dir>`")
            }
            if study == nil {
                try db.execute(sql: "INSERT INTO study (singleton, study_id, created_at) VALUES (1, ?, ?)", arguments: [p.id, Self.isoNow(at)])
            }
            let current = try ProtocolRevisionRow.fetchOne(db, sql: "SELECT *, rowid AS row_id FROM protocol_revisions WHERE is_current = 1")
            if let current, current.sha256 == sha {
                return PinnedProtocol(studyProtocol: p, sha256: sha, canonicalJSON: json)
            }
            if let current, current.revision > Int64(p.revision) {
                throw CohortError(.conflict, "revision \(p.revision) is older than the current revision \(current.revision)",
                    hint: "increase 'revision' in the protocol file for an amendment")
            }
            if let current, current.revision == Int64(p.revision) {
                throw CohortError(.conflict, "revision \(p.revision) is already loaded with different content",
                    hint: "an amendment needs a new revision number")
            }
            try db.execute(sql: "UPDATE protocol_revisions SET is_current = 0 WHERE is_current = 1")
            try db.execute(
                sql: "INSERT INTO protocol_revisions (sha256, study_id, revision, canonical_json, source_path, loaded_at, is_current) VALUES (?, ?, ?, ?, ?, ?, 1)",
                arguments: [sha, p.id, p.revision, json, loaded.source?.lastPathComponent, Self.isoNow(at)])
            for (path, content) in templates.sorted(by: { $0.key < $1.key }) {
                try db.execute(
                    sql: "INSERT INTO templates (protocol_sha256, path, sha256, content) VALUES (?, ?, ?, ?)",
                    arguments: [sha, path, SHA256.hex(content), content])
            }
            try appendEvent(
                db, actor: actor, action: "protocol.load", subject: p.id,
                details: ["revision": String(p.revision), "sha256": sha, "templates": String(templates.count)], at: at)
            return PinnedProtocol(studyProtocol: p, sha256: sha, canonicalJSON: json)
        }
    }

    /// The current protocol revision, or nil before one is loaded.
    public func currentProtocol() throws -> PinnedProtocol? {
        try read { db in
            try ProtocolRevisionRow.fetchOne(db, sql: "SELECT *, rowid AS row_id FROM protocol_revisions WHERE is_current = 1").map {
                PinnedProtocol(studyProtocol: $0.studyProtocol, sha256: $0.sha256, canonicalJSON: $0.canonicalJSON)
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
