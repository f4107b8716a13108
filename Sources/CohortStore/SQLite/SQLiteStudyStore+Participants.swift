import CohortCore
import CohortCrypto
import Foundation
import GRDB

extension SQLiteStudyStore {
    /// The participant of a decoded row, identity decrypted when asked.
    func stored(_ row: ParticipantRow, withIdentity: Bool) throws -> StoredParticipant {
        try row.stored(piiKey: piiKey, withIdentity: withIdentity) { column, expected in
            RowReader.problem(table: ParticipantRow.databaseTableName, rowID: row.pk, column: column, expected: expected)
        }
    }

    /// Every participant, ordered by study code; identities decrypted only when asked.
    public func participants(withIdentities: Bool) throws -> [StoredParticipant] {
        try read { db in
            try ParticipantRow.fetchAll(db, sql: "SELECT * FROM participants ORDER BY code").map { try stored($0, withIdentity: withIdentities) }
        }
    }

    /// Every participant through a cursor, ordered by study code; identities decrypted only when asked.
    public func forEachParticipant(withIdentities: Bool, _ body: (StoredParticipant) throws -> Void) throws {
        try read { db in
            let cursor = try ParticipantRow.fetchCursor(db, sql: "SELECT * FROM participants ORDER BY code")
            while let row = try cursor.next() { try body(try stored(row, withIdentity: withIdentities)) }
        }
    }

    /// The participant with study code `code`, or nil.
    public func participant(code: String, withIdentity: Bool) throws -> StoredParticipant? {
        try read { db in
            try ParticipantRow.fetchOne(db, sql: "SELECT * FROM participants WHERE code = ?", arguments: [code]).map { try stored($0, withIdentity: withIdentity) }
        }
    }

    /// The participant's withdrawal token salt and hash (nil once erased).
    public func withdrawalTokenHash(_ participant: ParticipantHandle) throws -> (salt: [UInt8], hash: [UInt8])? {
        try read { db in
            guard let row = try ParticipantRow.fetchOne(db, sql: "SELECT * FROM participants WHERE pk = ?", arguments: [participant.rowKey]),
                let salt = row.tokenSalt, let hash = row.tokenHash
            else { return nil }
            return (salt, hash)
        }
    }
}
