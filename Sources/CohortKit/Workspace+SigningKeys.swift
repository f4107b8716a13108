import CohortCore
public import CohortCrypto
public import CohortStore
import Foundation

/// Per-site signing keys (issue #30): the registry the trail holds, the owner's registration of a
/// key, and what this workspace's own key may sign.
extension Workspace {
    /// The signing keys the trail registers (see ``SigningKeyRegistry``).
    public func signingKeys() throws -> SigningKeyRegistry {
        try SigningKeyRegistry.load(from: store, ownKey: keystore.publicKey)
    }

    /// What this workspace's own key may sign for; nil when the trail does not register it.
    public func signingScope() throws -> SigningKeyRegistry.Scope? {
        try signingKeys().entry(fingerprint: keystore.publicKey.fingerprint)?.scope
    }

    /// Registers `key` for `scope` in the trail (`site.key_registered`, signed by the owner's key)
    /// and signs the new head. Only the owner's workspace can: its key is the one `keys.create`
    /// names (on PostgreSQL the server also refuses the action from any role but the tables' owner).
    ///
    /// - Throws: `.security` from a workspace that is not the owner's; `.conflict` for a key the
    ///   trail already registers.
    @discardableResult
    public func registerSigningKey(_ key: Ed25519PublicKey, scope: SigningKeyRegistry.Scope) throws -> AuditEvent {
        let registry = try signingKeys()
        guard registry.owner?.fingerprint == keystore.publicKey.fingerprint else {
            throw CohortError(
                .security, "only the study owner's workspace registers signing keys (this workspace signs as \(registry.entry(fingerprint: keystore.publicKey.fingerprint)?.scope.description ?? "an unregistered key"))",
                at: .init(file: Self.keysDirectory(of: directory).appendingPathComponent(Keystore.signingKeyFileName).path),
                hint: "run this from the owner's workspace (the one `cohort init` made)")
        }
        if scope == .owner { throw CohortError.invalid("the owner's key is registered by `cohort init`", field: "scope") }
        if let existing = registry.entry(fingerprint: key.fingerprint) {
            throw CohortError(.conflict, "the key \(key.fingerprint) is already registered (\(existing.scope), event \(existing.seq))",
                hint: "make a new key for the site (`cohort site invite` does)")
        }
        let signature = try keystore.signingKey.signature(for: SigningKeyRegistry.registrationMessage(scope: scope, key: key))
        var details = [
            "key_fingerprint": key.fingerprint, "public_key": Base64.encode(key.rawRepresentation),
            "owner_public_key": Base64.encode(keystore.publicKey.rawRepresentation), "owner_signature": Base64.encode(signature),
        ]
        if let site = scope.site { details["site"] = site } else { details["study_wide"] = "true" }
        let event = try store.appendEvent(actor: actor, action: SigningKeyRegistry.registeredAction, details: details, at: now())
        try checkpoint()
        return event
    }

    /// Refuses an export this workspace's key may not sign: a site's key signs exports of its own
    /// site only (give `--site`); the owner's and study-wide keys sign any.
    func checkSigningScope(exportSite: String?) throws {
        guard let scope = try signingScope(), !scope.allows(site: exportSite) else { return }
        throw CohortError(
            .security, "this workspace's key signs for \(scope) only; \(exportSite.map { "site \($0)" } ?? "a study-wide export") is not its to sign",
            at: .init(field: "site"), hint: "export with --site \(scope.site ?? "NAME"); a study-wide export is made from the owner's or a study-wide workspace")
    }
}
