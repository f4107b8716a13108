package import CohortCore
package import CohortCrypto
import Foundation

/// How both stores seal what may identify a person before it reaches the database: AES-256-GCM
/// under `pii.key`, a fresh nonce per value, and associated data naming the row and field, so a
/// sealed value copied into another row (or another column) does not open.
///
/// - direct identifiers: `participant:<participant id>:<field>`;
/// - consent signature evidence: `consent:<consent id>:signature`;
/// - record notes: `record:<participant row key>:<kind>:<start ms>:<source>:note`.
///
/// Pure functions (no SQL): the SQLite and PostgreSQL stores bind the bytes they return.
package enum PIISealing {
    /// The sealed identity columns and the field their associated data names, in the order
    /// ``sealIdentity(_:participantID:key:)`` returns them.
    package static let identityColumns: [(column: String, field: String)] = [
        ("name_enc", "name"), ("email_enc", "email"), ("phone_enc", "phone"), ("birth_date_enc", "birth_date"), ("address_enc", "address"),
        ("zip_enc", "zip"), ("mrn_enc", "mrn"), ("devices_enc", "devices"),
    ]

    static func identityAAD(participantID: String, field: String) -> [UInt8] { Array("participant:\(participantID):\(field)".utf8) }

    /// The identity's fields sealed, one per ``identityColumns`` entry (nil: absent or empty).
    /// `participantID` is the participant's internal id, lower-case.
    package static func sealIdentity(_ identity: ParticipantIdentity, participantID: String, key: [UInt8]) throws -> [[UInt8]?] {
        func seal(_ value: String?, _ field: String) throws -> [UInt8]? {
            guard let value, !value.isEmpty else { return nil }
            return try AESGCM.seal(Array(value.utf8), key: key, authenticating: identityAAD(participantID: participantID, field: field))
        }
        let devices = identity.devices.isEmpty ? nil : String(decoding: try CanonicalJSON.encode(identity.devices), as: UTF8.self)
        return [
            try seal(identity.name, "name"), try seal(identity.email, "email"), try seal(identity.phone, "phone"),
            try seal(identity.birthDate?.description, "birth_date"), try seal(identity.address, "address"), try seal(identity.zip, "zip"),
            try seal(identity.mrn, "mrn"), try seal(devices, "devices"),
        ]
    }

    /// The identity behind sealed columns (column name → bytes; a missing column is NULL), or nil
    /// when the name is gone (erased). A sealed value that opens to something malformed fails
    /// with `problem(column, expected)`; one that does not open fails as ``AESGCM`` reports it.
    package static func openIdentity(
        _ sealed: [String: [UInt8]], participantID: String, key: [UInt8], problem: (_ column: String, _ expected: String) -> CohortError
    ) throws -> ParticipantIdentity? {
        func open(_ column: String, _ field: String) throws -> String? {
            guard let data = sealed[column] else { return nil }
            let plain = try AESGCM.open(data, key: key, authenticating: identityAAD(participantID: participantID, field: field))
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

    /// The identity behind sealed columns, opened with the first of `keys` that opens the name
    /// (per-site data keys: the caller need not know which site's key sealed the row). When none
    /// opens it, fails as the first key does.
    /// With `perSite` (per-site data keys), a name no key opens fails with
    /// `problem("name_enc", …)` saying it is sealed with a key this workspace does not hold.
    package static func openIdentity(
        _ sealed: [String: [UInt8]], participantID: String, keys: [[UInt8]], perSite: Bool = false,
        problem: (_ column: String, _ expected: String) -> CohortError
    ) throws -> ParticipantIdentity? {
        if let name = sealed["name_enc"], keys.count > 1 || perSite {
            guard
                let key = keys.first(where: {
                    (try? AESGCM.open(name, key: $0, authenticating: identityAAD(participantID: participantID, field: "name"))) != nil
                })
            else {
                throw problem(
                    "name_enc",
                    "identifiers sealed with a key this workspace holds (the study's, or its site's data key); another site's identifiers do not open here")
            }
            return try openIdentity(sealed, participantID: participantID, key: key, problem: problem)
        }
        return try openIdentity(sealed, participantID: participantID, key: keys.first ?? [], problem: problem)
    }

    /// A consent's signature evidence sealed for consent `consentID` (lower-case).
    package static func sealSignature(_ evidence: String, consentID: String, key: [UInt8]) throws -> [UInt8] {
        try AESGCM.seal(Array(evidence.utf8), key: key, authenticating: Array("consent:\(consentID):signature".utf8))
    }

    /// The associated data of a note: the record's unique key and the field, so a sealed note
    /// opens only in its own row.
    package static func noteAAD(participantPK: Int64, kind: String, startMs: Int64, source: String) -> [UInt8] {
        Array("record:\(participantPK):\(kind):\(startMs):\(source):note".utf8)
    }

    /// A record's note sealed for the record's unique key.
    package static func sealNote(_ note: String, key: [UInt8], participantPK: Int64, kind: String, startMs: Int64, source: String) throws -> [UInt8] {
        try AESGCM.seal(Array(note.utf8), key: key, authenticating: noteAAD(participantPK: participantPK, kind: kind, startMs: startMs, source: source))
    }

    /// A stored record's note opened; one that was sealed for another row or under another key
    /// fails with `problem("note_enc", expected)`, as both stores word it.
    package static func openStoredNote(
        _ sealed: [UInt8], key: [UInt8], participantPK: Int64, kind: String, startMs: Int64, source: String,
        problem: (_ column: String, _ expected: String) -> CohortError
    ) throws -> String {
        var opener: AESGCM.Opener?
        return try openStoredNote(
            sealed, key: key, opener: &opener, participantPK: participantPK, kind: kind, startMs: startMs, source: source, problem: problem)
    }

    /// ``openStoredNote(_:key:participantPK:kind:startMs:source:problem:)`` through `opener`, an
    /// ``AESGCM/Opener`` for `key` made here at the first note and kept by the caller for the
    /// next ones (the key is set up once for a reader's many notes). Same errors: the one-note
    /// form above is this with a fresh opener.
    package static func openStoredNote(
        _ sealed: [UInt8], key: [UInt8], opener: inout AESGCM.Opener?, participantPK: Int64, kind: String, startMs: Int64, source: String,
        problem: (_ column: String, _ expected: String) -> CohortError
    ) throws -> String {
        do {
            let keyed = try opener ?? AESGCM.Opener(key: key)
            opener = keyed
            let aad = noteAAD(participantPK: participantPK, kind: kind, startMs: startMs, source: source)
            return String(decoding: try keyed.open(sealed, authenticating: aad), as: UTF8.self)
        } catch {
            throw problem("note_enc", "a note encrypted with this workspace's pii.key for this record (wrong key, or moved)")
        }
    }

    /// A stored record's note opened with the first of `keys` that opens it (per-site data keys).
    package static func openStoredNote(
        _ sealed: [UInt8], keys: [[UInt8]], participantPK: Int64, kind: String, startMs: Int64, source: String,
        problem: (_ column: String, _ expected: String) -> CohortError
    ) throws -> String {
        for key in keys {
            if let note = try? openNote(sealed, key: key, participantPK: participantPK, kind: kind, startMs: startMs, source: source) { return note }
        }
        throw problem("note_enc", "a note encrypted with this workspace's pii.key (or its site's data key) for this record (wrong key, or moved)")
    }

    /// A record's note opened; throws when it was sealed for another row or key.
    package static func openNote(_ sealed: [UInt8], key: [UInt8], participantPK: Int64, kind: String, startMs: Int64, source: String) throws -> String {
        String(
            decoding: try AESGCM.open(sealed, key: key, authenticating: noteAAD(participantPK: participantPK, kind: kind, startMs: startMs, source: source)),
            as: UTF8.self)
    }
}
