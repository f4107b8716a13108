import CohortCore
import CohortCrypto
public import Foundation
import GRDB

extension SQLiteStudyStore {
    static let identityColumns = ParticipantRow.identityColumns

    /// Enrolls participants in one transaction (all or nothing), one audit event each.
    public func enroll(_ enrollments: [Enrollment], actor: String, source: String, at: Date) throws {
        try write { db in
            for e in enrollments {
                let p = e.participant
                if try Bool.fetchOne(db, sql: "SELECT 1 FROM participants WHERE code = ?", arguments: [p.code]) == true {
                    throw CohortError(.conflict, "participant \(p.code) is already enrolled", hint: "choose another study code")
                }
                let id = p.id.uuidString.lowercased()
                let enc = try encryptIdentity(e.identity, participantID: id)
                var arguments: StatementArguments = [
                    id, p.code, p.sex.rawValue, p.timeZone, p.enrolledOn.description, p.status.rawValue,
                ]
                arguments += StatementArguments(enc.map { $0.map { Data($0) } })
                arguments += [Data(e.tokenSalt), Data(e.tokenHash), Self.isoNow(at), p.site]
                try db.execute(
                    sql: """
                        INSERT INTO participants (id, code, sex, time_zone, enrolled_on, status, \(Self.identityColumns.joined(separator: ", ")),
                            token_salt, token_hash, created_at, site)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """, arguments: arguments)
                try appendEvent(db, actor: actor, action: "participant.enroll", subject: id, details: e.auditDetails(source: source), at: at)
            }
        }
    }

    func encryptIdentity(_ identity: ParticipantIdentity, participantID: String) throws -> [[UInt8]?] {
        func seal(_ value: String?, _ field: String) throws -> [UInt8]? {
            guard let value, !value.isEmpty else { return nil }
            return try AESGCM.seal(Array(value.utf8), key: piiKey, authenticating: Array("participant:\(participantID):\(field)".utf8))
        }
        let devices = identity.devices.isEmpty ? nil : String(decoding: try CanonicalJSON.encode(identity.devices), as: UTF8.self)
        return [
            try seal(identity.name, "name"), try seal(identity.email, "email"), try seal(identity.phone, "phone"),
            try seal(identity.birthDate?.description, "birth_date"), try seal(identity.address, "address"), try seal(identity.zip, "zip"),
            try seal(identity.mrn, "mrn"), try seal(devices, "devices"),
        ]
    }

    func decryptIdentity(_ row: ParticipantRow) throws -> ParticipantIdentity? {
        let id = row.id.uuidString.lowercased()
        func problem(_ column: String, _ expected: String) -> CohortError {
            RowReader.problem(table: ParticipantRow.databaseTableName, rowID: row.pk, column: column, expected: expected)
        }
        func open(_ column: String, _ field: String) throws -> String? {
            guard let data = row.sealedIdentity[column] else { return nil }
            let plain = try AESGCM.open(data, key: piiKey, authenticating: Array("participant:\(id):\(field)".utf8))
            return String(decoding: plain, as: UTF8.self)
        }
        guard let name = try open("name_enc", "name") else { return nil }
        var devices: [String] = []
        if let json = try open("devices_enc", "devices") {
            guard let list = try? JSONDecoder().decode([String].self, from: Data(json.utf8)) else {
                throw problem("devices_enc", "an encrypted JSON list of device names")
            }
            devices = list
        }
        var birthDate: CivilDate?
        if let text = try open("birth_date_enc", "birth_date") {
            guard let date = CivilDate(iso: text) else { throw problem("birth_date_enc", "an encrypted date YYYY-MM-DD") }
            birthDate = date
        }
        return ParticipantIdentity(
            name: name, email: try open("email_enc", "email"), phone: try open("phone_enc", "phone"), birthDate: birthDate,
            address: try open("address_enc", "address"), zip: try open("zip_enc", "zip"), mrn: try open("mrn_enc", "mrn"), devices: devices)
    }

    /// The participant of a decoded row, identity decrypted when asked.
    func stored(_ row: ParticipantRow, withIdentity: Bool) throws -> StoredParticipant {
        StoredParticipant(handle: row.handle, participant: row.participant(identity: withIdentity ? try decryptIdentity(row) : nil))
    }

    /// Every participant, ordered by study code; identities decrypted only when asked.
    public func participants(withIdentities: Bool) throws -> [StoredParticipant] {
        try read { db in
            try ParticipantRow.fetchAll(db, sql: "SELECT * FROM participants ORDER BY code").map { try stored($0, withIdentity: withIdentities) }
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

    static func isoNow(_ date: Date) -> String {
        Timestamp(date, in: .gmt).iso8601
    }
}
