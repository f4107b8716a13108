import CohortCore
public import CohortCrypto
public import CohortStore
import Foundation

/// The study's signing keys as its audit trail records them, and what each may sign.
///
/// The **owner's key** is the one whose fingerprint `keys.create` (the study's first events)
/// recorded: it may sign everything. Every other key is registered by the owner with a
/// `site.key_registered` event carrying the key, its scope (`site` — one site — or
/// `study_wide`), and the owner's Ed25519 signature over
/// `cohort/signing-key@1 scope=<site:NAME|study-wide> key=<base64 raw key>` together with the
/// owner's public key. A registration counts only when that signature verifies with the key
/// `keys.create` names, so a registration holds by construction — whoever could write the
/// event (on PostgreSQL only the owner can: a trigger refuses the action from any other role)
/// cannot forge the owner's signature. A site's key signs checkpoints from its registration on,
/// and manifests and receipts of its own site only; a study-wide key signs for every site.
public struct SigningKeyRegistry: Sendable {
    /// What a key may sign for.
    public enum Scope: Sendable, Hashable, CustomStringConvertible {
        /// The study owner's key (`keys.create`): everything.
        case owner
        /// A study-wide key (monitors): every site.
        case studyWide
        /// One site's key: that site's participants and exports only.
        case site(String)

        /// `the owner`, `study-wide`, `site site-a`.
        public var description: String {
            switch self {
            case .owner: "the owner"
            case .studyWide: "the study-wide role"
            case let .site(name): "site \(name)"
            }
        }

        /// The site this key is limited to; nil for the owner's and study-wide keys.
        public var site: String? {
            if case let .site(name) = self { return name }
            return nil
        }

        /// Whether a key of this scope may sign for `site` (nil: the whole study).
        public func allows(site other: String?) -> Bool {
            guard let site else { return true }
            return other == site
        }

        var messageText: String { site.map { "site:\($0)" } ?? "study-wide" }
    }

    /// One key of the registry.
    public struct Entry: Sendable {
        /// The public key (nil only for the owner's key when no event carries it and this
        /// workspace does not hold it).
        public var key: Ed25519PublicKey?
        /// ``Ed25519PublicKey/fingerprint`` of the key.
        public var fingerprint: String
        /// What it may sign for.
        public var scope: Scope
        /// The event that registered it (the owner's: `keys.create`).
        public var seq: Int64
        /// The owner's `site.key_revoked` event for it, if any: the key signs only what it
        /// signed before that event (heads, manifests' checkpoints, withdrawals of earlier seq).
        public var revokedAt: Int64? = nil

        /// Why this key may not have signed something of event `seq` (nil: unknown, counts as
        /// after), or nil when it may: `signed by site S's key revoked at event N`.
        public func revocationProblem(signedAt seq: Int64?) -> String? {
            guard let revokedAt, seq.map({ $0 >= revokedAt }) ?? true else { return nil }
            return "signed by \(scope)'s key revoked at event \(revokedAt)"
        }
    }

    /// The action of a registration event.
    public static let registeredAction = "site.key_registered"

    /// The action of a revocation event (owner-only on PostgreSQL: migration `v7-owner-actions`).
    public static let revokedAction = "site.key_revoked"

    /// The bytes the owner signs to revoke the key `fingerprint` of `site`.
    public static func revocationMessage(site: String, fingerprint: String) -> [UInt8] {
        Array("cohort/signing-key-revoked@1 site=\(site) key=\(fingerprint)".utf8)
    }

    /// The owner's key.
    public let owner: Entry?
    /// Registered keys by fingerprint.
    public let registered: [String: Entry]
    /// Registration events that do not count (not signed by the owner's key, a key registered
    /// twice), each naming its event.
    public let problems: [String]

    /// The bytes the owner signs to register `key` for `scope`.
    public static func registrationMessage(scope: Scope, key: Ed25519PublicKey) -> [UInt8] {
        Array("cohort/signing-key@1 scope=\(scope.messageText) key=\(Base64.encode(key.rawRepresentation))".utf8)
    }

    /// The registry of `store`'s trail; `ownKey` is the workspace's own public key (the owner's
    /// key itself when the workspace is the owner's).
    public static func load(from store: any StudyStore, ownKey: Ed25519PublicKey) throws -> SigningKeyRegistry {
        let recorded = try KeyCheck.recordedEvent(in: store)
        let ownerFingerprint = recorded?.details["signing"]
        let events = try store.auditEvents(action: registeredAction)
        var ownerKey: Ed25519PublicKey? = ownKey.fingerprint == ownerFingerprint ? ownKey : nil
        if ownerKey == nil {
            for event in events {
                if let text = event.details["owner_public_key"], let raw = Base64.decode(text),
                    let key = try? Ed25519PublicKey(rawRepresentation: raw), key.fingerprint == ownerFingerprint
                {
                    ownerKey = key
                    break
                }
            }
        }
        var registered: [String: Entry] = [:]
        var problems: [String] = []
        for event in events {
            let d = event.details
            let scope: Scope? =
                if let site = d["site"], SiteName.isValid(site), d["study_wide"] == nil { .site(site) }
                else if d["study_wide"] == "true", d["site"] == nil { .studyWide }
                else { nil }
            guard let scope, let raw = d["public_key"].flatMap(Base64.decode), let key = try? Ed25519PublicKey(rawRepresentation: raw),
                key.fingerprint == d["key_fingerprint"]
            else {
                problems.append("event \(event.seq) (\(registeredAction)): the registration is malformed")
                continue
            }
            guard let ownerKey, let signature = d["owner_signature"].flatMap(Base64.decode),
                ownerKey.isValidSignature(signature, for: registrationMessage(scope: scope, key: key))
            else {
                problems.append("event \(event.seq) (\(registeredAction)): the registration of \(key.fingerprint) is not signed by the owner's key")
                continue
            }
            guard registered[key.fingerprint] == nil, key.fingerprint != ownerFingerprint else {
                problems.append("event \(event.seq) (\(registeredAction)): \(key.fingerprint) is registered again")
                continue
            }
            registered[key.fingerprint] = Entry(key: key, fingerprint: key.fingerprint, scope: scope, seq: event.seq)
        }
        try applyRevocations(try store.auditEvents(action: revokedAction), ownerKey: ownerKey, to: &registered, problems: &problems)
        let owner = ownerFingerprint.map { Entry(key: ownerKey, fingerprint: $0, scope: .owner, seq: recorded?.seq ?? 1) }
        return SigningKeyRegistry(owner: owner, registered: registered, problems: problems)
    }

    /// Marks each registered site key an owner-signed `site.key_revoked` event names (the first
    /// such event counts); a revocation not signed by the owner's key, or of a key the trail did
    /// not register for that site before it, is a problem and revokes nothing.
    static func applyRevocations(
        _ events: [AuditEvent], ownerKey: Ed25519PublicKey?, to registered: inout [String: Entry], problems: inout [String]
    ) throws {
        for event in events {
            let d = event.details
            guard let site = d["site"], let fingerprint = d["key_fingerprint"] else {
                problems.append("event \(event.seq) (\(revokedAction)): the revocation is malformed")
                continue
            }
            guard let ownerKey, let signature = d["owner_signature"].flatMap(Base64.decode),
                ownerKey.isValidSignature(signature, for: revocationMessage(site: site, fingerprint: fingerprint))
            else {
                problems.append("event \(event.seq) (\(revokedAction)): the revocation of \(fingerprint) is not signed by the owner's key")
                continue
            }
            guard let entry = registered[fingerprint], entry.scope == .site(site), entry.seq < event.seq else {
                problems.append("event \(event.seq) (\(revokedAction)): \(fingerprint) is no key the trail registered for site \(site) before it")
                continue
            }
            if entry.revokedAt == nil { registered[fingerprint]?.revokedAt = event.seq }
        }
    }

    /// The entry of the key with this fingerprint; nil when the trail does not register it.
    public func entry(fingerprint: String) -> Entry? {
        if let owner, owner.fingerprint == fingerprint { return owner }
        return registered[fingerprint]
    }

    /// Every key with what it may sign, for checkpoints: the owner's from the first event, the
    /// others from their registration; `fallback` (the workspace's own key) when the trail names
    /// no owner's key.
    public func checkpointSigners(fallback: Ed25519PublicKey) -> CheckpointSigners {
        var signers: [CheckpointSigners.Signer] = []
        if let key = owner?.key {
            signers.append(.init(key: key, fromSeq: 1, name: "the owner's key"))
        } else if owner == nil {
            signers.append(.init(key: fallback, fromSeq: 1, name: "the study key"))
        }
        for entry in registered.values.sorted(by: { $0.seq < $1.seq }) {
            if let key = entry.key {
                signers.append(.init(key: key, fromSeq: entry.seq, name: "\(entry.scope)'s key", untilSeq: entry.revokedAt))
            }
        }
        return CheckpointSigners(signers)
    }
}
