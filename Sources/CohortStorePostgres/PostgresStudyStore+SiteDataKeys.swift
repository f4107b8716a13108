import CohortCore
import CohortCrypto
import CohortPostgres
import CohortStore
import Foundation

/// Per-site identifier keys on PostgreSQL (issue #30, envelope encryption; table
/// `site_data_keys`, migration `v8-site-data-keys`).
///
/// Each site has a random 32-byte data key that seals its participants' identifiers, notes,
/// consent evidence and redactable texts. It is stored only wrapped: under the owner's
/// study-wide `pii.key` (`holder = 'study'`) and under the site's key-encryption key
/// (`holder = 'site'`), which is the `pii.key` of the site's workspace. Rotation re-wraps the data
/// key under a new key-encryption key; no row is re-encrypted.
extension PostgresStudyStore {
    /// The ring `piiKey` opens: every site data key it unwraps (the owner's key unwraps the
    /// `study` rows; a site's key-encryption key its own site's `site` row). A site workspace's
    /// texts about no participant are sealed with its site's data key.
    static func keyRing(_ conn: PostgresConnection, piiKey: [UInt8]) throws -> PIIKeyRing {
        let rows = try conn.query("SELECT site, holder, encode(wrapped, 'base64') FROM site_data_keys")
        var siteKeys: [String: [UInt8]] = [:]
        var ownSite: String?
        for row in rows {
            guard row.count == 3, let site = row[0], let holder = row[1], let text = row[2],
                let wrapped = Base64.decode(text.filter { !$0.isWhitespace })
            else { continue }
            guard let key = PIIKeyRing.unwrap(wrapped, with: piiKey, site: site, holder: holder) else { continue }
            siteKeys[site] = key
            if holder.hasPrefix("site:") { ownSite = site }
        }
        if let ownSite, let key = siteKeys[ownSite] {
            // A site's workspace: its pii.key is a key-encryption key, not a key that seals anything.
            return PIIKeyRing(defaultKey: key, siteKeys: siteKeys, ownSite: ownSite)
        }
        return PIIKeyRing(defaultKey: piiKey, siteKeys: siteKeys)
    }

    /// The site whose key-encryption key this workspace's `pii.key` is (it unwrapped that site's
    /// data key from a `site:` row, which only the owner writes); nil for the owner's, a
    /// study-wide or a single-key workspace.
    public var keyEncryptionSite: String? { keys.ownSite }

    /// The sites that have a data key.
    public func sitesWithDataKeys() throws -> [String] {
        try reading { conn in
            try conn.query("SELECT DISTINCT site FROM site_data_keys ORDER BY site").compactMap { $0.first ?? nil }
        }
    }

    /// Wraps `site`'s data key under `kek` (the new `pii.key` of a site coordinator's workspace,
    /// fingerprint `kekFingerprint`), making the data key first when the site has none (wrapped
    /// under this workspace's `pii.key`, the owner's). With `replacing`, every other wrap for the
    /// site's coordinators is deleted first (a rotation: earlier workspaces of the site no longer
    /// open its data key; no row is re-encrypted). Returns true when the data key was made now.
    /// The owner's only: the server grants no one else any write on `site_data_keys`.
    ///
    /// - Throws: `.integrity` when the site's data key does not open with this workspace's
    ///   `pii.key` (not the owner's workspace, or a damaged row); `.security` when the server
    ///   refuses the write.
    @discardableResult
    public func wrapSiteDataKey(site: String, kek: [UInt8], kekFingerprint: String, replacing: Bool) throws -> Bool {
        let location = self.location
        let ownerKey = piiKey
        return try change { conn in
            try conn.query("LOCK TABLE site_data_keys IN SHARE ROW EXCLUSIVE MODE")
            let existing = try conn.query(
                "SELECT encode(wrapped, 'base64') FROM site_data_keys WHERE site = $1 AND holder = 'study'", values: [.text(site)]
            ).first?.first ?? nil
            let dataKey: [UInt8]
            var made = false
            if let existing {
                guard let wrapped = Base64.decode(existing.filter { !$0.isWhitespace }),
                    let key = PIIKeyRing.unwrap(wrapped, with: ownerKey, site: site, holder: "study")
                else {
                    throw Self.problem(
                        table: "site_data_keys", rowID: nil, column: "wrapped",
                        expected: "the site's data key wrapped under this workspace's pii.key (only the study owner's workspace wraps site keys)",
                        location: location)
                }
                dataKey = key
            } else {
                dataKey = try SecureRandom.bytes(32)
                try conn.command(
                    "INSERT INTO site_data_keys (site, holder, wrapped) VALUES ($1, 'study', $2)",
                    values: [.text(site), .bytes(try PIIKeyRing.wrap(dataKey, with: ownerKey, site: site, holder: "study"))])
                made = true
                try Self.adopt(conn, site: site, from: ownerKey, to: dataKey, location: location)
            }
            if replacing { try conn.command("DELETE FROM site_data_keys WHERE site = $1 AND holder <> 'study'", values: [.text(site)]) }
            let holder = PIIKeyRing.siteHolder(fingerprint: kekFingerprint)
            try conn.command(
                """
                INSERT INTO site_data_keys (site, holder, wrapped) VALUES ($1, $2, $3)
                ON CONFLICT (site, holder) DO UPDATE SET wrapped = EXCLUDED.wrapped
                """, values: [.text(site), .text(holder), .bytes(try PIIKeyRing.wrap(dataKey, with: kek, site: site, holder: holder))])
            return made
        }
    }

    /// Re-seals, once, what was sealed about `site`'s participants before the site had a data key
    /// (under the study's `pii.key`): identifiers, consent evidence, record notes and redactable
    /// texts, each with the same associated data. Runs in the transaction that makes the data key;
    /// a value that does not open with the study key fails the whole step (nothing changes).
    static func adopt(_ conn: PostgresConnection, site: String, from oldKey: [UInt8], to newKey: [UInt8], location: String) throws {
        func reseal(_ base64: String?, aad: String, table: String, column: String) throws -> [UInt8]? {
            guard let base64 else { return nil }
            guard let sealed = Base64.decode(base64.filter { !$0.isWhitespace }),
                let plain = try? AESGCM.open(sealed, key: oldKey, authenticating: Array(aad.utf8))
            else {
                throw problem(
                    table: table, rowID: nil, column: column,
                    expected: "a value sealed with the study's pii.key (to re-seal under the site's new data key)", location: location)
            }
            return try AESGCM.seal(plain, key: newKey, authenticating: Array(aad.utf8))
        }
        let columns = PIISealing.identityColumns
        let encoded = columns.map { "encode(\($0.column), 'base64')" }.joined(separator: ", ")
        for row in try conn.query("SELECT pk, id::text, \(encoded) FROM participants WHERE site = $1", values: [.text(site)]) {
            guard let pk = row[0].flatMap({ Int64($0) }), let id = row[1] else { continue }
            var values: [PostgresValue] = []
            for (index, column) in columns.enumerated() {
                values.append(.optional(try reseal(row[index + 2], aad: "participant:\(id):\(column.field)", table: "participants", column: column.column)))
            }
            let sets = columns.enumerated().map { "\($0.element.column) = $\($0.offset + 1)" }.joined(separator: ", ")
            try conn.command("UPDATE participants SET \(sets) WHERE pk = $\(columns.count + 1)", values: values + [.int(pk)])
        }
        for row in try conn.query(
            """
            SELECT c.id::text, encode(c.signature_enc, 'base64') FROM consents c JOIN participants p ON p.pk = c.participant_pk
            WHERE p.site = $1 AND c.signature_enc IS NOT NULL
            """, values: [.text(site)])
        {
            guard let id = row[0], let sealed = try reseal(row[1], aad: "consent:\(id):signature", table: "consents", column: "signature_enc") else { continue }
            try conn.command("UPDATE consents SET signature_enc = $1 WHERE id::text = $2", values: [.bytes(sealed), .text(id)])
        }
        for row in try conn.query(
            """
            SELECT r.id, r.participant_pk, r.kind, r.start_ms, r.source, encode(r.note_enc, 'base64') FROM records r
            JOIN participants p ON p.pk = r.participant_pk WHERE p.site = $1 AND r.note_enc IS NOT NULL
            """, values: [.text(site)])
        {
            guard let id = row[0].flatMap({ Int64($0) }), let pk = row[1].flatMap({ Int64($0) }), let kind = row[2],
                let start = row[3].flatMap({ Int64($0) }), let source = row[4]
            else { continue }
            let aad = String(decoding: PIISealing.noteAAD(participantPK: pk, kind: kind, startMs: start, source: source), as: UTF8.self)
            guard let sealed = try reseal(row[5], aad: aad, table: "records", column: "note_enc") else { continue }
            try conn.command("UPDATE records SET note_enc = $1 WHERE id = $2", values: [.bytes(sealed), .int(id)])
        }
        for row in try conn.query(
            """
            SELECT digest, encode(text_enc, 'base64') FROM redactable_texts
            WHERE participant_id IN (SELECT id::text FROM participants WHERE site = $1)
            """, values: [.text(site)])
        {
            guard let digest = row[0], let sealed = try reseal(row[1], aad: "redactable:\(digest)", table: "redactable_texts", column: "text_enc")
            else { continue }
            try conn.command("UPDATE redactable_texts SET text_enc = $1 WHERE digest = $2", values: [.bytes(sealed), .text(digest)])
        }
    }
}
