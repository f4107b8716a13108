import CohortCore
import Foundation
import GRDB

/// A `consents` row (selected with `rowid AS row_id`, for messages), decoded strictly.
struct ConsentRow: FetchableRecord, TableRecord {
    static let databaseTableName = "consents"

    var id: UUID
    var participantPK: Int64
    var version: String
    var documentSHA256: String
    var signedAt: Timestamp
    var signatureKind: SignatureKind
    /// The signature evidence, sealed under pii.key (NULL after an erase).
    var sealedSignature: [UInt8]?
    var sharing: SharingScope
    var status: ConsentStatus
    var recordedAt: Timestamp

    init(row: Row) throws {
        let r = RowReader(row, table: Self.databaseTableName)
        id = try r.uuid("id")
        participantPK = try r.int64("participant_pk")
        version = try r.string("version")
        documentSHA256 = try r.string("document_sha256")
        signedAt = Timestamp(epochMilliseconds: try r.int64("signed_at_ms"), utcOffsetSeconds: try r.offset("signed_offset"))
        signatureKind = try r.choice("signature_kind", SignatureKind.self)
        sealedSignature = try r.optionalBlob("signature_enc")
        sharing = try r.sharingScope("sharing")
        status = try r.choice("status", ConsentStatus.self)
        recordedAt = Timestamp(epochMilliseconds: try r.int64("recorded_at_ms"), utcOffsetSeconds: try r.offset("recorded_offset"))
    }

    /// The consent of participant `participantID` (the row names the participant by row key).
    func consent(participantID: UUID) -> Consent {
        Consent(
            id: id, participantID: participantID, version: version, documentSHA256: documentSHA256, signedAt: signedAt,
            signatureKind: signatureKind, sharing: sharing, status: status, recordedAt: recordedAt)
    }
}
