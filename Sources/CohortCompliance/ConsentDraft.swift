package import CohortCore

/// A consent to record, as entered (before validation against the protocol and history).
package struct ConsentDraft: Sendable, Hashable {
    /// The document version signed; must be listed in the protocol.
    public var version: String
    /// SHA-256 (64 hex digits) of the exact document text signed.
    public var documentSHA256: String
    /// When it was signed.
    public var signedAt: Timestamp
    /// How it was signed.
    package var signatureKind: SignatureKind
    /// What the participant agreed their data may be used for.
    public var sharing: SharingScope

    /// Creates a draft.
    package init(version: String, documentSHA256: String, signedAt: Timestamp, signatureKind: SignatureKind, sharing: SharingScope) {
        self.version = version
        self.documentSHA256 = documentSHA256
        self.signedAt = signedAt
        self.signatureKind = signatureKind
        self.sharing = sharing
    }
}
