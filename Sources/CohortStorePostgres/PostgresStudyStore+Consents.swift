public import CohortCore
import CohortPostgres
public import CohortStore
public import Foundation

/// Consents, withdrawals and erasure on PostgreSQL.
extension PostgresStudyStore {
    static let consentColumns =
        "c.recorded_order, p.id AS participant_id, c.participant_pk, c.id, c.version, c.document_sha256, c.signed_at_ms, c.signed_offset, c.signature_kind, c.sharing, c.status, c.recorded_at_ms, c.recorded_offset"

    func consents(_ conn: PostgresConnection, _ condition: String, _ values: [PostgresValue]) throws -> [Consent] {
        let sql = """
            SELECT \(Self.consentColumns) FROM consents c JOIN participants p ON p.pk = c.participant_pk \(condition)
            ORDER BY c.signed_at_ms, c.recorded_at_ms, c.recorded_order
            """
        return try rows(conn, sql, values, selected: Self.consentColumns, table: "consents", rowIDColumn: "recorded_order").map { r in
            try ConsentRow(r).consent(participantID: try r.uuid("participant_id"))
        }
    }

    /// One participant's consents, oldest first (signing time, recording time, insertion).
    public func consentHistory(_ participant: ParticipantHandle, participantID: UUID) throws -> [Consent] {
        try reading { conn in try consents(conn, "WHERE c.participant_pk = $1", [.int(participant.rowKey)]) }
    }

    /// The consent history of every participant, keyed by participant id, oldest first.
    public func consentHistories() throws -> [UUID: [Consent]] {
        try reading { conn in
            var result: [UUID: [Consent]] = [:]
            for consent in try consents(conn, "", []) { result[consent.participantID, default: []].append(consent) }
            return result
        }
    }

    /// The withdrawal of a participant, if any (the latest).
    public func withdrawal(_ participant: ParticipantHandle) throws -> StoredWithdrawal? {
        try reading { conn in
            let selected = "recorded_order, id, participant_pk, mode, at_ms, by_kind, actor, reason, consent_version, counts_json"
            guard let r = try rows(conn, "SELECT \(selected) FROM withdrawals WHERE participant_pk = $1 ORDER BY at_ms DESC, recorded_order DESC LIMIT 1",
                [.int(participant.rowKey)], selected: selected, table: "withdrawals", rowIDColumn: "recorded_order").first
            else { return nil }
            let row = try WithdrawalRow(r)
            let texts = try revealRedactable(conn, [row.actor] + (row.reason.map { [$0] } ?? []))
            return try StoredWithdrawal(row) { texts[$0] }
        }
    }

    /// The tables an erase deletes or overwrites rows in.
    static let erasedTables = ["participants", "consents", "records", "redactable_texts"]

    /// Vacuums the tables an erase touches (outside any transaction, as VACUUM requires), so the
    /// dead row versions holding erased values are removed from the tables and their space is
    /// reused. What VACUUM cannot reach — the write-ahead log, backups, replicas, row versions
    /// an open snapshot still sees, tables this role does not own — is described in docs/store.md.
    public func purgeDeletedData() throws {
        guard !isReadOnly else {
            throw CohortError(.system, "this command opened the study database read-only and cannot vacuum it", at: .init(file: location))
        }
        try connection.withConnection { conn in
            _ = try conn.query("VACUUM " + Self.erasedTables.joined(separator: ", "))
        }
    }
}
