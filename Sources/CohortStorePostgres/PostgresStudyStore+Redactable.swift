import CohortCore
import CohortPostgres
import CohortStore
import Foundation

/// Redactable texts on PostgreSQL: rows of `redactable_texts`, sealed before they are sent (see
/// `RedactableText` for what the chain commits to). An erase deletes the participant's rows; the
/// chain keeps only salted hashes, so it stays intact.
extension PostgresStudyStore {
    /// The texts behind the redactable references among `values`, by reference; a reference
    /// whose row was erased is absent. One query for all of them.
    func revealRedactable(_ conn: PostgresConnection, _ values: some Sequence<String>) throws -> [String: String] {
        let digests = Set(values.compactMap { RedactableText.digest(of: $0) })
        guard !digests.isEmpty else { return [:] }
        // Digests are hex (checked), so the array literal needs no quoting.
        let hex = digests.filter { $0.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) } }
        guard !hex.isEmpty else { return [:] }
        let selected = "digest, salt, text_enc"
        let rows = try rows(
            conn, "SELECT \(selected) FROM redactable_texts WHERE digest = ANY($1::text[])", [.text("{" + hex.sorted().joined(separator: ",") + "}")],
            selected: selected, table: "redactable_texts", rowIDColumn: nil)
        var texts: [String: String] = [:]
        for row in rows {
            let digest = try row.string("digest")
            let text = RedactableText(digest: digest, salt: try row.bytes("salt"), sealed: try row.bytes("text_enc"))
            do {
                texts[text.reference] = try Self.open(text, keys: keys)
            } catch .sealedText where keys.ownSite != nil {
                // A site's workspace holds its own site's data key only: the owner's and other
                // sites' texts stay sealed to it (by design, not damage).
                texts[text.reference] = "[sealed]"
            } catch .sealedText {
                throw Self.problem(
                    table: "redactable_texts", rowID: nil, column: "text_enc",
                    expected: "text encrypted with this workspace's pii.key for this row (wrong key, or the row was moved)", location: location)
            } catch .salt {
                throw Self.problem(
                    table: "redactable_texts", rowID: nil, column: "salt", expected: "the salt whose hash the audit trail commits to", location: location)
            }
        }
        return texts
    }

    /// `text` opened with the first key of `keys` that opens it.
    static func open(_ text: RedactableText, keys: PIIKeyRing) throws(RedactableText.OpenFailure) -> String {
        var failure = RedactableText.OpenFailure.sealedText
        for key in keys.all {
            do { return try text.open(key: key) } catch { failure = error; if case .salt = error { throw error } }
        }
        throw failure
    }

    /// The text behind one committed value: the text, nil when erased, the value itself when it
    /// is not a reference.
    func revealRedactable(_ conn: PostgresConnection, _ value: String) throws -> String? {
        guard RedactableText.digest(of: value) != nil else { return value }
        return try revealRedactable(conn, [value])[value]
    }
}
