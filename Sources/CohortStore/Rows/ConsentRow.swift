package import CohortCore
package import Foundation

/// A `consents` row, decoded strictly (SQLite selects `rowid AS row_id` for messages).
package struct ConsentRow: Sendable {
    package static let databaseTableName = "consents"

    package var id: UUID
    package var participantPK: Int64
    package var version: String
    package var documentSHA256: String
    package var signedAt: Timestamp
    package var signatureKind: SignatureKind
    /// The signature evidence, sealed under pii.key (NULL after an erase).
    package var sealedSignature: [UInt8]?
    package var sharing: SharingScope
    package var status: ConsentStatus
    package var recordedAt: Timestamp

    /// Decodes the row `r` reads (either store's).
    package init(_ r: some ColumnReader) throws {
        id = try r.uuid("id")
        participantPK = try r.int64("participant_pk")
        version = try r.string("version")
        documentSHA256 = try r.string("document_sha256")
        signedAt = try r.timestamp("signed_at_ms", offset: "signed_offset")
        signatureKind = try r.choice("signature_kind", SignatureKind.self)
        sealedSignature = try r.optionalBytes("signature_enc")
        sharing = try r.sharingScope("sharing")
        status = try r.choice("status", ConsentStatus.self)
        recordedAt = try r.timestamp("recorded_at_ms", offset: "recorded_offset")
    }

    /// The consent of participant `participantID` (the row names the participant by row key).
    package func consent(participantID: UUID) -> Consent {
        Consent(
            id: id, participantID: participantID, version: version, documentSHA256: documentSHA256, signedAt: signedAt,
            signatureKind: signatureKind, sharing: sharing, status: status, recordedAt: recordedAt)
    }
}
