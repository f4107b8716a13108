import CohortCore
import Foundation
import GRDB

/// A `participants` row, decoded strictly: every column checked, nothing defaulted. The direct
/// identifiers stay sealed (AES-256-GCM under pii.key) until the store opens them.
struct ParticipantRow: FetchableRecord, TableRecord {
    static let databaseTableName = "participants"
    /// The sealed identity columns, in ``SQLiteStudyStore/identityColumns`` order.
    static let identityColumns = PIISealing.identityColumns.map(\.column)

    var pk: Int64
    var id: UUID
    var code: String
    var sex: Sex
    var timeZone: String
    var enrolledOn: CivilDate
    var status: ParticipantStatus
    var withdrawnAt: Timestamp?
    /// Sealed identity column → its bytes (absent: NULL).
    var sealedIdentity: [String: [UInt8]]
    var tokenSalt: [UInt8]?
    var tokenHash: [UInt8]?
    var createdAt: String
    /// The site (schema v3); nil in a single-site study.
    var site: String?

    init(row: Row) throws {
        let r = RowReader(row, table: Self.databaseTableName, rowIDColumn: "pk")
        pk = try r.int64("pk")
        id = try r.uuid("id")
        code = try r.string("code")
        sex = try r.choice("sex", Sex.self)
        timeZone = try r.string("time_zone")
        enrolledOn = try r.civilDate("enrolled_on")
        status = try r.choice("status", ParticipantStatus.self)
        if let ms = try r.optionalInt64("withdrawn_at_ms") {
            withdrawnAt = Timestamp(epochMilliseconds: ms, utcOffsetSeconds: try r.offset("withdrawn_offset"))
        } else {
            withdrawnAt = nil
        }
        var sealed: [String: [UInt8]] = [:]
        for column in Self.identityColumns {
            if let bytes = try r.optionalBlob(column) { sealed[column] = bytes }
        }
        sealedIdentity = sealed
        tokenSalt = try r.optionalBlob("token_salt")
        tokenHash = try r.optionalBlob("token_hash")
        createdAt = try r.string("created_at")
        site = row.hasColumn("site") ? try r.optionalString("site") : nil
    }

    var handle: ParticipantHandle { ParticipantHandle(rowKey: pk) }

    /// The participant without identity.
    func participant(identity: ParticipantIdentity?) -> Participant {
        Participant(
            id: id, code: code, sex: sex, timeZone: timeZone, enrolledOn: enrolledOn, status: status, withdrawnAt: withdrawnAt, identity: identity, site: site)
    }
}
