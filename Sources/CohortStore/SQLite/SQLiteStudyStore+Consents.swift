public import CohortCore
import CohortCrypto
public import Foundation
import GRDB

extension SQLiteStudyStore {

    /// One participant's consents, oldest first (as ``consentHistories()`` lists them).
    public func consentHistory(_ participant: ParticipantHandle, participantID: UUID) throws -> [Consent] {
        try read { db in
            try ConsentRow.fetchAll(
                db, sql: "SELECT *, rowid AS row_id FROM consents WHERE participant_pk = ? ORDER BY signed_at_ms, recorded_at_ms, rowid",
                arguments: [participant.rowKey]
            ).map { $0.consent(participantID: participantID) }
        }
    }

    /// The consent history of every participant, keyed by participant id, oldest first.
    public func consentHistories() throws -> [UUID: [Consent]] {
        try read { db in
            var ids: [Int64: UUID] = [:]
            for row in try ParticipantRow.fetchAll(db, sql: "SELECT * FROM participants") { ids[row.pk] = row.id }
            var result: [UUID: [Consent]] = [:]
            let rows = try ConsentRow.fetchAll(db, sql: "SELECT *, rowid AS row_id FROM consents ORDER BY signed_at_ms, recorded_at_ms, rowid")
            for row in rows {
                // The foreign key holds while foreign keys are on; a hand-edited file need not.
                guard let pid = ids[row.participantPK] else {
                    throw RowReader.problem(table: ConsentRow.databaseTableName, rowID: nil, column: "participant_pk", expected: "the key of a participant row")
                }
                result[pid, default: []].append(row.consent(participantID: pid))
            }
            return result
        }
    }

    /// The withdrawal of a participant, if any (the latest).
    public func withdrawal(_ participant: ParticipantHandle) throws -> StoredWithdrawal? {
        try read { db in
            guard
                let row = try WithdrawalRow.fetchOne(
                    db, sql: "SELECT *, rowid AS row_id FROM withdrawals WHERE participant_pk = ? ORDER BY at_ms DESC, rowid DESC LIMIT 1",
                    arguments: [participant.rowKey])
            else { return nil }
            return try StoredWithdrawal(row) { try revealRedactable(db, $0) }
        }
    }

}
