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
}
