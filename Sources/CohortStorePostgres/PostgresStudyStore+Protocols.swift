public import CohortCore
import CohortCrypto
import CohortPostgres
public import CohortStore
public import Foundation

/// Protocol revisions and their templates on PostgreSQL, pinned by the SHA-256 of the canonical JSON.
extension PostgresStudyStore {
    /// Pins `loaded` (and the text of every template it names) and makes it current. A protocol
    /// for another study is refused: one database holds one study. Runs under the audit lock
    /// from the start, so two coordinators loading at once pin one after the other.
    @discardableResult
    public func pinProtocol(_ loaded: LoadedProtocol, templates: [String: Data], actor: String, at: Date) throws -> PinnedProtocol {
        let json = try loaded.canonicalJSON()
        let sha = SHA256.hex(json)
        let p = loaded.studyProtocol
        let pinned = PinnedProtocol(studyProtocol: p, sha256: sha, canonicalJSON: json)
        return try change { conn in
            try lockAuditChain(conn)
            let study = try rows(conn, "SELECT singleton, study_id FROM study", selected: "singleton, study_id", table: "study", rowIDColumn: "singleton")
                .first?.string("study_id")
            if let study, study != p.id {
                throw CohortError(.conflict, "this workspace holds study '\(study)', not '\(p.id)'",
                    hint: "one workspace holds one study: create another with `cohort init -w <dir>`")
            }
            if study == nil {
                try conn.command("INSERT INTO study (singleton, study_id, created_at) VALUES (1, $1, $2)", values: [.text(p.id), .text(AuditChain.instant(at))])
            }
            let selected = "sha256, revision, loaded_order"
            if let current = try rows(conn, "SELECT \(selected) FROM protocol_revisions WHERE is_current", selected: selected,
                table: "protocol_revisions", rowIDColumn: "loaded_order").first
            {
                let revision = try current.int64("revision")
                if try current.string("sha256") == sha { return pinned }
                if revision > Int64(p.revision) {
                    throw CohortError(.conflict, "revision \(p.revision) is older than the current revision \(revision)",
                        hint: "increase 'revision' in the protocol file for an amendment")
                }
                if revision == Int64(p.revision) {
                    throw CohortError(.conflict, "revision \(p.revision) is already loaded with different content",
                        hint: "an amendment needs a new revision number")
                }
            }
            try conn.command("UPDATE protocol_revisions SET is_current = false WHERE is_current")
            try conn.command(
                "INSERT INTO protocol_revisions (sha256, study_id, revision, canonical_json, source_path, loaded_at, is_current) VALUES ($1, $2, $3, $4, $5, $6, true)",
                values: [.text(sha), .text(p.id), .int(Int64(p.revision)), .bytes(Array(json)), .optional(loaded.source?.lastPathComponent), .text(AuditChain.instant(at))])
            for (path, content) in templates.sorted(by: { $0.key < $1.key }) {
                try conn.command(
                    "INSERT INTO templates (protocol_sha256, path, sha256, content) VALUES ($1, $2, $3, $4)",
                    values: [.text(sha), .text(path), .text(SHA256.hex(content)), .bytes(Array(content))])
            }
            try appendEvent(
                conn, actor: actor, action: "protocol.load", subject: p.id,
                details: ["revision": String(p.revision), "sha256": sha, "templates": String(templates.count)], at: at)
            return pinned
        }
    }

    /// The current protocol revision, or nil before one is loaded.
    public func currentProtocol() throws -> PinnedProtocol? {
        try reading { conn in
            let selected = "sha256, canonical_json, loaded_order"
            guard let row = try rows(conn, "SELECT \(selected) FROM protocol_revisions WHERE is_current", selected: selected,
                table: "protocol_revisions", rowIDColumn: "loaded_order").first
            else { return nil }
            let json = Data(try row.bytes("canonical_json"))
            guard let p = try? JSONDecoder().decode(StudyProtocol.self, from: json) else {
                throw row.problem("canonical_json", expected: "a cohort/protocol@1 document this version of cohort reads")
            }
            return PinnedProtocol(studyProtocol: p, sha256: try row.string("sha256"), canonicalJSON: json)
        }
    }

    /// A template's text as pinned with protocol `protocolSHA256`.
    public func template(path: String, protocolSHA256: String) throws -> Data? {
        try reading { conn in
            try rows(conn, "SELECT content FROM templates WHERE protocol_sha256 = $1 AND path = $2", [.text(protocolSHA256), .text(path)],
                selected: "content", table: "templates", rowIDColumn: nil).first.map { Data(try $0.bytes("content")) }
        }
    }
}
