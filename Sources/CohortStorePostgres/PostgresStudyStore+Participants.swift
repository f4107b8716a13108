import CohortCore
import CohortPostgres
public import CohortStore
import Foundation

/// Participants on PostgreSQL: identifiers sealed with pii.key (the same associated data as the
/// SQLite store, `participant:<id>:<field>`) before they are sent; the site in the clear (it is
/// how rows are shared out between coordinators).
extension PostgresStudyStore {
    /// Participant rows per `FETCH` of a roster cursor: a row carries eight sealed columns as
    /// hex text (about 2 KB), so a few hundred at a time keep the read's memory flat.
    static let participantFetchRows = 256

    static let participantColumns =
        "pk, id, code, site, sex, time_zone, enrolled_on, status, withdrawn_at_ms, withdrawn_offset, "
        + PIISealing.identityColumns.map(\.column).joined(separator: ", ") + ", token_salt, token_hash, created_at"

    /// The participant of a row selected with ``participantColumns`` (decoded as on SQLite, by
    /// `ParticipantRow`), identity opened when asked.
    func stored(_ r: PostgresRow, withIdentity: Bool) throws -> StoredParticipant {
        try ParticipantRow(r).stored(keys: keys.all, perSite: !keys.siteKeys.isEmpty, withIdentity: withIdentity) { column, expected in r.problem(column, expected: expected) }
    }

    func participantRows(_ conn: PostgresConnection, _ condition: String, _ values: [PostgresValue] = []) throws -> [PostgresRow] {
        try rows(conn, "SELECT \(Self.participantColumns) FROM participants \(condition)", values, selected: Self.participantColumns,
            table: "participants", rowIDColumn: "pk")
    }

    /// Every participant, ordered by study code (byte order, as in SQLite); identities opened only when asked.
    public func participants(withIdentities: Bool) throws -> [StoredParticipant] {
        try reading { conn in try participantRows(conn, "ORDER BY code COLLATE \"C\"").map { try stored($0, withIdentity: withIdentities) } }
    }

    /// Every participant through a server-side cursor, ordered by study code (byte order),
    /// ``participantFetchRows`` at a time; identities opened only when asked.
    public func forEachParticipant(withIdentities: Bool, _ body: (StoredParticipant) throws -> Void) throws {
        let names = PostgresRow.names(Self.participantColumns)
        let location = self.location
        let sql = "SELECT \(Self.participantColumns) FROM participants ORDER BY code COLLATE \"C\""
        try streamRows(sql, batch: Self.participantFetchRows) { values in
            try body(try stored(PostgresRow(values, names: names, table: "participants", location: location, rowIDColumn: "pk"), withIdentity: withIdentities))
        }
    }

    /// The participant with study code `code`, or nil.
    public func participant(code: String, withIdentity: Bool) throws -> StoredParticipant? {
        try reading { conn in try participantRows(conn, "WHERE code = $1", [.text(code)]).first.map { try stored($0, withIdentity: withIdentity) } }
    }

    /// The participant's withdrawal token salt and hash (nil once erased).
    public func withdrawalTokenHash(_ participant: ParticipantHandle) throws -> (salt: [UInt8], hash: [UInt8])? {
        try reading { conn in
            guard let row = try rows(conn, "SELECT pk, token_salt, token_hash FROM participants WHERE pk = $1", [.int(participant.rowKey)],
                selected: "pk, token_salt, token_hash", table: "participants", rowIDColumn: "pk").first,
                let salt = try row.optionalBytes("token_salt"), let hash = try row.optionalBytes("token_hash")
            else { return nil }
            return (salt, hash)
        }
    }
}
