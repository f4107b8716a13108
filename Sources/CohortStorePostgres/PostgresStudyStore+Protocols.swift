import CohortCore
import CohortCrypto
import CohortPostgres
public import CohortStore
public import Foundation

/// Protocol revisions and their templates on PostgreSQL, pinned by the SHA-256 of the canonical JSON.
extension PostgresStudyStore {

    /// The current protocol revision, or nil before one is loaded; its JSON re-hashed against
    /// the SHA-256 it is pinned by (``PinnedProtocol/checkPin(sha256:canonicalJSON:location:)``).
    public func currentProtocol() throws -> PinnedProtocol? {
        try reading { conn in try revision(conn, where: "is_current", []) }
    }

    /// The protocol revision pinned with `sha256`, re-hashed likewise.
    public func protocolRevision(sha256: String) throws -> PinnedProtocol? {
        try reading { conn in try revision(conn, where: "sha256 = $1", [.text(sha256)]) }
    }

    /// The revision matching `condition`, its JSON re-hashed against its pin, then decoded.
    func revision(_ conn: PostgresConnection, where condition: String, _ values: [PostgresValue]) throws -> PinnedProtocol? {
        let selected = "sha256, canonical_json, loaded_order"
        guard let row = try rows(conn, "SELECT \(selected) FROM protocol_revisions WHERE \(condition)", values, selected: selected,
            table: "protocol_revisions", rowIDColumn: "loaded_order").first
        else { return nil }
        let json = Data(try row.bytes("canonical_json"))
        let sha256 = try row.string("sha256")
        try PinnedProtocol.checkPin(sha256: sha256, canonicalJSON: json, location: location)
        guard let p = try? JSONDecoder().decode(StudyProtocol.self, from: json) else {
            throw row.problem("canonical_json", expected: "a cohort/protocol@1 document this version of cohort reads")
        }
        return PinnedProtocol(studyProtocol: p, sha256: sha256, canonicalJSON: json)
    }

    /// A template's text as pinned with protocol `protocolSHA256`.
    public func template(path: String, protocolSHA256: String) throws -> Data? {
        try reading { conn in
            try rows(conn, "SELECT content FROM templates WHERE protocol_sha256 = $1 AND path = $2", [.text(protocolSHA256), .text(path)],
                selected: "content", table: "templates", rowIDColumn: nil).first.map { Data(try $0.bytes("content")) }
        }
    }
}
