package import CohortCore
package import Foundation

/// A `participants` row, decoded strictly: every column checked, nothing defaulted. The direct
/// identifiers stay sealed (AES-256-GCM under pii.key) until the store opens them.
package struct ParticipantRow: Sendable {
    package static let databaseTableName = "participants"
    /// The sealed identity columns, in ``PIISealing/identityColumns`` order.
    package static let identityColumns = PIISealing.identityColumns.map(\.column)

    package var pk: Int64
    package var id: UUID
    package var code: String
    package var sex: Sex
    package var timeZone: String
    package var enrolledOn: CivilDate
    package var status: ParticipantStatus
    package var withdrawnAt: Timestamp?
    /// Sealed identity column → its bytes (absent: NULL).
    package var sealedIdentity: [String: [UInt8]]
    package var tokenSalt: [UInt8]?
    package var tokenHash: [UInt8]?
    package var createdAt: String
    /// The site (schema v3); nil in a single-site study.
    package var site: String?

    /// Decodes the row `r` reads (either store's).
    package init(_ r: some ColumnReader) throws {
        pk = try r.int64("pk")
        id = try r.uuid("id")
        code = try r.string("code")
        sex = try r.choice("sex", Sex.self)
        timeZone = try r.string("time_zone")
        enrolledOn = try r.civilDate("enrolled_on")
        status = try r.choice("status", ParticipantStatus.self)
        withdrawnAt = try r.optionalInt64("withdrawn_at_ms") == nil ? nil : try r.timestamp("withdrawn_at_ms", offset: "withdrawn_offset")
        var sealed: [String: [UInt8]] = [:]
        for column in Self.identityColumns {
            if let bytes = try r.optionalBytes(column) { sealed[column] = bytes }
        }
        sealedIdentity = sealed
        tokenSalt = try r.optionalBytes("token_salt")
        tokenHash = try r.optionalBytes("token_hash")
        createdAt = try r.string("created_at")
        site = r.hasColumn("site") ? try r.optionalString("site") : nil
    }

    package var handle: ParticipantHandle { ParticipantHandle(rowKey: pk) }

    /// The participant without identity.
    package func participant(identity: ParticipantIdentity?) -> Participant {
        Participant(
            id: id, code: code, sex: sex, timeZone: timeZone, enrolledOn: enrolledOn, status: status, withdrawnAt: withdrawnAt, identity: identity, site: site)
    }

    /// The participant as the store hands it out, the identity opened under `piiKey` when asked;
    /// a sealed value that opens to something malformed fails with `problem(column, expected)`.
    package func stored(piiKey: [UInt8], withIdentity: Bool, problem: (_ column: String, _ expected: String) -> CohortError) throws
        -> StoredParticipant
    {
        try stored(keys: [piiKey], withIdentity: withIdentity, problem: problem)
    }

    /// As ``stored(piiKey:withIdentity:problem:)``, the identity opened with the first of `keys`
    /// that opens it (per-site data keys).
    package func stored(
        keys: [[UInt8]], perSite: Bool = false, withIdentity: Bool, problem: (_ column: String, _ expected: String) -> CohortError
    ) throws
        -> StoredParticipant
    {
        let identity =
            withIdentity ? try PIISealing.openIdentity(sealedIdentity, participantID: id.uuidString.lowercased(), keys: keys, perSite: perSite, problem: problem) : nil
        return StoredParticipant(handle: handle, participant: participant(identity: identity))
    }
}
