import CohortCore
import CohortCrypto
@testable import CohortKit
import CohortStore
import Foundation
import Testing

/// The registry of signing keys the audit trail holds, on the single-file store: only a
/// registration the owner's key signed counts, a site's key signs checkpoints from its
/// registration on, and a site's workspace cannot register keys.
struct SigningKeyRegistryTests {
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    func owner() throws -> (Workspace, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("registry-\(UUID().uuidString)")
        return (try Workspace.create(at: directory, actor: "owner", now: { Self.now }), directory)
    }

    @Test func aRegistrationCountsOnlyWhenTheOwnersKeySignedIt() throws {
        let (owner, directory) = try owner()
        defer { try? FileManager.default.removeItem(at: directory) }
        let siteKey = try Ed25519PrivateKey.generate()
        let event = try owner.registerSigningKey(siteKey.publicKey, scope: .site("site-a"))
        let registry = try owner.signingKeys()
        #expect(registry.entry(fingerprint: siteKey.publicKey.fingerprint)?.scope == .site("site-a"))
        #expect(registry.entry(fingerprint: siteKey.publicKey.fingerprint)?.seq == event.seq)
        #expect(registry.entry(fingerprint: owner.keystore.publicKey.fingerprint)?.scope == .owner)
        #expect(registry.problems.isEmpty)

        // The same event shape, signed by a key that is not the owner's: it does not count, and audit verify says so.
        let rogue = try Ed25519PrivateKey.generate()
        let forgedKey = try Ed25519PrivateKey.generate()
        let forgedSignature = try rogue.signature(for: SigningKeyRegistry.registrationMessage(scope: .site("site-b"), key: forgedKey.publicKey))
        try owner.store.appendEvent(
            actor: "x", action: SigningKeyRegistry.registeredAction,
            details: [
                "site": "site-b", "key_fingerprint": forgedKey.publicKey.fingerprint, "public_key": Base64.encode(forgedKey.publicKey.rawRepresentation),
                "owner_public_key": Base64.encode(rogue.publicKey.rawRepresentation), "owner_signature": Base64.encode(forgedSignature),
            ], at: Self.now)
        let after = try owner.signingKeys()
        #expect(after.entry(fingerprint: forgedKey.publicKey.fingerprint) == nil)
        #expect(after.problems.count == 1 && after.problems[0].contains("not signed by the owner's key"), "\(after.problems)")
        try owner.checkpoint()
        let verification = try owner.verifyAudit()
        #expect(verification.firstProblem?.contains("not signed by the owner's key") == true, "\(String(describing: verification.firstProblem))")
    }

    @Test func aSiteKeySignsCheckpointsFromItsRegistrationOnAndCannotRegister() throws {
        let (owner, directory) = try owner()
        defer { try? FileManager.default.removeItem(at: directory) }
        let siteKey = try Ed25519PrivateKey.generate()
        let before = try #require(try owner.store.auditHead())
        try owner.registerSigningKey(siteKey.publicKey, scope: .site("site-a"))
        let site = Workspace(
            directory: directory, store: owner.store,
            keystore: try Keystore(studySecret: owner.keystore.studySecret, piiKey: owner.keystore.piiKey, signingKey: siteKey), actor: "alice",
            now: { Self.now })
        #expect(try site.signingScope() == .site("site-a"))
        try site.store.appendEvent(actor: "alice", action: "participant.note", at: Self.now)
        let signed = try #require(try site.checkpoint())
        #expect(siteKey.publicKey.isValidSignature(Base64.decode(signed.signature) ?? [], for: signed.signedBytes))
        #expect(try owner.verifyAudit().isIntact)
        // A head before its registration is not the site's to sign.
        let early = AuditCheckpoint(
            seq: before.seq, headHash: before.hash, signature: Base64.encode(try siteKey.signature(for: AuditCheckpoint.message(seq: before.seq, headHash: before.hash))))
        #expect(try owner.signingKeys().checkpointSigners(fallback: owner.keystore.publicKey).signer(of: early) == nil)
        // The site's workspace registers no key, for any site; a study-wide export is not its to sign.
        let error = #expect(throws: CohortError.self) { try site.registerSigningKey(try Ed25519PrivateKey.generate().publicKey, scope: .site("site-b")) }
        #expect(error?.code == .security)
        #expect(throws: CohortError.self) { try site.checkSigningScope(exportSite: nil) }
        #expect(throws: CohortError.self) { try site.checkSigningScope(exportSite: "site-b") }
        try site.checkSigningScope(exportSite: "site-a")
        try owner.checkSigningScope(exportSite: nil)
    }

    /// A revoked site key signs heads, manifests and receipts only before the revocation event;
    /// a revocation signed by another key than the owner's revokes nothing and is reported.
    @Test func aRevokedKeyCountsOnlyBeforeItsRevocation() throws {
        let (owner, directory) = try owner()
        defer { try? FileManager.default.removeItem(at: directory) }
        let siteKey = try Ed25519PrivateKey.generate()
        try owner.registerSigningKey(siteKey.publicKey, scope: .site("site-a"))
        let site = Workspace(
            directory: directory, store: owner.store,
            keystore: try Keystore(studySecret: owner.keystore.studySecret, piiKey: owner.keystore.piiKey, signingKey: siteKey), actor: "alice",
            now: { Self.now })
        try site.store.appendEvent(actor: "alice", action: "participant.note", at: Self.now)
        let early = try #require(try site.checkpoint())

        // A forged revocation (signed by a key that is not the owner's) does not count.
        let rogue = try Ed25519PrivateKey.generate()
        let fingerprint = siteKey.publicKey.fingerprint
        try owner.store.appendEvent(
            actor: "x", action: SigningKeyRegistry.revokedAction,
            details: [
                "site": "site-a", "key_fingerprint": fingerprint, "owner_public_key": Base64.encode(rogue.publicKey.rawRepresentation),
                "owner_signature": Base64.encode(try rogue.signature(for: SigningKeyRegistry.revocationMessage(site: "site-a", fingerprint: fingerprint))),
            ], at: Self.now)
        let forged = try owner.signingKeys()
        #expect(forged.entry(fingerprint: fingerprint)?.revokedAt == nil)
        #expect(forged.problems.contains { $0.contains("the revocation of \(fingerprint) is not signed by the owner's key") }, "\(forged.problems)")

        // Only the owner revokes; the owner's revocation counts from its event.
        #expect(throws: CohortError.self) { try site.signingKeysToRevoke(site: "site-a", fingerprint: fingerprint) }
        let keys = try owner.signingKeysToRevoke(site: "site-a", fingerprint: fingerprint)
        let revocation = try #require(try owner.revokeSigningKeys(keys, reason: "revoke-key").first)
        let entry = try #require(try owner.signingKeys().entry(fingerprint: fingerprint))
        #expect(entry.revokedAt == revocation.seq)
        #expect(entry.revocationProblem(signedAt: revocation.seq - 1) == nil)
        #expect(entry.revocationProblem(signedAt: revocation.seq) == "signed by site site-a's key revoked at event \(revocation.seq)")
        #expect(entry.revocationProblem(signedAt: nil) != nil)
        let again = #expect(throws: CohortError.self) { try owner.signingKeysToRevoke(site: "site-a", fingerprint: fingerprint) }
        #expect(again?.code == .conflict)

        // Its checkpoint before the revocation still verifies; one of a later head, signed by it, does not.
        let signers = try owner.signingKeys().checkpointSigners(fallback: owner.keystore.publicKey)
        #expect(signers.signer(of: early) != nil)
        let head = try #require(try owner.store.auditHead())
        let late = AuditCheckpoint(
            seq: head.seq, headHash: head.hash, signature: Base64.encode(try siteKey.signature(for: AuditCheckpoint.message(seq: head.seq, headHash: head.hash))))
        #expect(signers.signer(of: late) == nil)
        #expect(signers.revocationProblem(of: late) == "signed by site site-a's key revoked at event \(revocation.seq)")
        #expect(try owner.verifyAudit().firstProblem?.contains("not signed by the owner's key") == true)
    }
}
