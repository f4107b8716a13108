import CohortCore
import CohortCrypto
import Foundation
import GRDB

/// Redactable texts in SQLite: the rows of `redactable_texts` (see ``RedactableText`` for what
/// the chain commits to and how a text is sealed).
extension SQLiteStudyStore {
    static let redactablePrefix = RedactableText.prefix

    /// Migration step: stores `text` as a redactable text of `participantID` and returns the
    /// reference the chain commits to.
    static func storeRedactable(_ db: Database, _ text: String, participantID: String?, piiKey: [UInt8]) throws -> String {
        let sealed = try RedactableText.seal(text, key: piiKey)
        try db.execute(
            sql: "INSERT INTO redactable_texts (digest, participant_id, salt, text_enc) VALUES (?, ?, ?, ?)",
            arguments: [sealed.digest, participantID, Data(sealed.salt), Data(sealed.sealed)])
        return sealed.reference
    }

    /// The text behind `value` when it is a redactable reference: the text, or nil when it was
    /// erased. A plain value (events written before redaction existed, fixed texts) is returned
    /// as is.
    func revealRedactable(_ db: Database, _ value: String) throws -> String? {
        guard let digest = RedactableText.digest(of: value) else { return value }
        guard let row = try RedactableTextRow.fetchOne(db, sql: "SELECT *, rowid AS row_id FROM redactable_texts WHERE digest = ?", arguments: [digest])
        else { return nil }
        do {
            return try RedactableText(digest: digest, salt: row.salt, sealed: row.sealedText).open(key: piiKey)
        } catch .sealedText {
            throw row.problem("text_enc", expected: "text encrypted with this workspace's pii.key for this row (wrong key, or the row was moved)")
        } catch .salt {
            throw row.problem("salt", expected: "the salt whose hash the audit trail commits to")
        }
    }

    /// Migration step: withdrawals' plaintext actor and reason become redactable references.
    static func moveWithdrawalTextsToRedactable(_ db: Database, piiKey: [UInt8]) throws {
        let rows = try Row.fetchAll(
            db, sql: "SELECT w.rowid AS row_id, w.actor, w.reason, p.id AS pid FROM withdrawals w JOIN participants p ON p.pk = w.participant_pk")
        for row in rows {
            let r = RowReader(row, table: "withdrawals", file: "study.db")
            let rowID = try r.int64("row_id")
            let pid = try r.optionalString("pid")
            func move(_ text: String?, owner: String?) throws -> String? {
                guard let text, !text.hasPrefix(redactablePrefix) else { return text }
                return try storeRedactable(db, text, participantID: owner, piiKey: piiKey)
            }
            let actor = try r.optionalString("actor")
            let reason = try r.optionalString("reason")
            try db.execute(
                sql: "UPDATE withdrawals SET actor = ?, reason = ? WHERE rowid = ?",
                arguments: [try move(actor, owner: nil) ?? "", try move(reason, owner: pid), rowID])
        }
    }

    /// Migration step: import batches' plaintext actor names become redactable references.
    static func moveBatchActorsToRedactable(_ db: Database, piiKey: [UInt8]) throws {
        for row in try Row.fetchAll(db, sql: "SELECT id, actor FROM import_batches") {
            let r = RowReader(row, table: "import_batches", file: "study.db", rowIDColumn: "id")
            let actor = try r.string("actor")
            guard !actor.isEmpty, !actor.hasPrefix(redactablePrefix) else { continue }
            let reference = try storeRedactable(db, actor, participantID: nil, piiKey: piiKey)
            try db.execute(sql: "UPDATE import_batches SET actor = ? WHERE id = ?", arguments: [reference, try r.int64("id")])
        }
    }
}
