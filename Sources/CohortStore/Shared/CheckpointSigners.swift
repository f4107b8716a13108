public import CohortCore
public import CohortCrypto

/// The keys allowed to sign checkpoints of an audit chain, each from the event it was registered
/// at: the study owner's key from the first event, a site's key from its `site.key_registered`
/// event (a checkpoint of an earlier head by that key is not one the study allowed).
public struct CheckpointSigners: Sendable {
    /// One allowed key.
    public struct Signer: Sendable {
        /// The public key.
        public var key: Ed25519PublicKey
        /// The first event whose head this key may sign.
        public var fromSeq: Int64
        /// How `audit verify` names it ("the owner's key", "site-a's key").
        public var name: String

        /// A signer as given.
        public init(key: Ed25519PublicKey, fromSeq: Int64, name: String) {
            self.key = key
            self.fromSeq = fromSeq
            self.name = name
        }
    }

    /// The allowed keys.
    public var signers: [Signer]

    /// Signers as given.
    public init(_ signers: [Signer]) { self.signers = signers }

    /// One key for the whole chain (a single-site study: the study's signing key).
    public init(only key: Ed25519PublicKey) { self.signers = [Signer(key: key, fromSeq: 1, name: "the study key")] }

    /// The signer whose key made `checkpoint`'s signature and may sign its head; nil when none.
    public func signer(of checkpoint: AuditCheckpoint) -> Signer? {
        let signature = Base64.decode(checkpoint.signature) ?? []
        return signers.first { $0.fromSeq <= checkpoint.seq && $0.key.isValidSignature(signature, for: checkpoint.signedBytes) }
    }
}
