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
        /// The event that revoked it (`site.key_revoked`): it signs only heads before it; nil: never revoked.
        public var untilSeq: Int64?

        /// A signer as given.
        public init(key: Ed25519PublicKey, fromSeq: Int64, name: String, untilSeq: Int64? = nil) {
            self.key = key
            self.fromSeq = fromSeq
            self.name = name
            self.untilSeq = untilSeq
        }

        func mayHaveSigned(_ seq: Int64) -> Bool { fromSeq <= seq && untilSeq.map { seq < $0 } ?? true }
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
        return signers.first { $0.mayHaveSigned(checkpoint.seq) && $0.key.isValidSignature(signature, for: checkpoint.signedBytes) }
    }

    /// When a revoked key made `checkpoint`'s signature for a head from its revocation on:
    /// `signed by site S's key revoked at event N`; else nil.
    public func revocationProblem(of checkpoint: AuditCheckpoint) -> String? {
        let signature = Base64.decode(checkpoint.signature) ?? []
        guard let revoked = signers.first(where: { signer in
            signer.untilSeq.map { checkpoint.seq >= $0 } ?? false && signer.key.isValidSignature(signature, for: checkpoint.signedBytes)
        }), let until = revoked.untilSeq
        else { return nil }
        return "signed by \(revoked.name) revoked at event \(until)"
    }
}
