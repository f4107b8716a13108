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

    /// The site keys of `site` that `revokeSigningKeys` would revoke: the one `fingerprint` names
    /// (nil: every registered key of the site but `keeping`), not yet revoked.
    ///
    /// - Throws: `.security` from a workspace that is not the owner's; `.notFound` when
    ///   `fingerprint` is no key registered for `site`; `.conflict` when it is already revoked.
    public func signingKeysToRevoke(site: String, fingerprint: String?, keeping: String? = nil) throws -> [SigningKeyRegistry.Entry] {
        let registry = try signingKeys()
        guard registry.owner?.fingerprint == keystore.publicKey.fingerprint else {
            throw CohortError(
                .security, "only the study owner's workspace revokes signing keys (this workspace signs as \(registry.entry(fingerprint: keystore.publicKey.fingerprint)?.scope.description ?? "an unregistered key"))",
                at: .init(field: "workspace"), hint: "ask the study owner to run `cohort site revoke-key --site \(site) --key FINGERPRINT`")
        }
        guard let fingerprint else {
            return registry.registered.values.filter { $0.scope == .site(site) && $0.revokedAt == nil && $0.fingerprint != keeping }.sorted { $0.seq < $1.seq }
        }
        guard let entry = registry.registered[fingerprint], entry.scope == .site(site) else {
            throw CohortError(
                .notFound, "no signing key with that fingerprint is registered for site \(site)", at: .init(field: "key"),
                hint: "give the fingerprint `cohort site invite` or `site rotate-key` printed (SHA256:…); `cohort audit show` lists site.key_registered events")
        }
        if let revokedAt = entry.revokedAt {
            throw CohortError(.conflict, "that key of site \(site) is already revoked (event \(revokedAt))", at: .init(field: "key"), hint: "nothing to do")
        }
        return [entry]
    }

    /// Revokes each of `keys` (site keys, from ``signingKeysToRevoke(site:fingerprint:keeping:)``):
    /// one `site.key_revoked` event each, signed by the owner's key over
    /// ``SigningKeyRegistry/revocationMessage(site:fingerprint:)``, then signs the new head. From
    /// then on the key signs nothing the trail accepts (earlier checkpoints, exports and
    /// receipts stay valid).
    @discardableResult
    public func revokeSigningKeys(_ keys: [SigningKeyRegistry.Entry], reason: String) throws -> [AuditEvent] {
        var events: [AuditEvent] = []
        for entry in keys {
            guard let site = entry.scope.site else { throw CohortError.invalid("only a site's key is revoked", field: "key") }
            let signature = try keystore.signingKey.signature(for: SigningKeyRegistry.revocationMessage(site: site, fingerprint: entry.fingerprint))
            let details = [
                "site": site, "key_fingerprint": entry.fingerprint, "registered_seq": String(entry.seq), "reason": reason,
                "owner_public_key": Base64.encode(keystore.publicKey.rawRepresentation), "owner_signature": Base64.encode(signature),
            ]
            events.append(try store.appendEvent(actor: actor, action: SigningKeyRegistry.revokedAction, details: details, at: now()))
        }
        if !events.isEmpty { try checkpoint() }
        return events
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
