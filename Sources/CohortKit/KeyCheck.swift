import CohortCore
import CohortCrypto
import CohortStore
import CohortStorePostgres
import Foundation

/// Key check values: proof, kept in the study database, of which keys belong to the study.
///
/// The check value of a key is its fingerprint (``KeyFingerprints``: SHA-256 over a per-key domain
/// label and the key; it reveals nothing about the key). `cohort init` records the fingerprints of
/// `study.secret`, `pii.key` and the signing key in the hash-chained `keys.create` audit event, so
/// the database itself says which keys it was made with: a replaced key file or a swapped `keys/`
/// folder is caught when the workspace opens, before any command reads or writes an identifier
/// (without this, new identifiers would be encrypted under the wrong key and the mistake would
/// surface only at export).
///
/// A workspace whose trail has no `keys.create` event (made by hand, or by a tool older than the
/// key fingerprints) gets a `keys.check` event with the present keys' fingerprints on its first
/// writable open; from then on it is checked the same way.
enum KeyCheck {
    /// The event `cohort init` writes with the keys' fingerprints.
    static let createdAction = "keys.create"
    /// The event that records check values for a workspace that had none.
    static let recordedAction = "keys.check"
    /// `keys.create` is among the first events of every workspace `cohort init` made.
    private static let createdWithin = 16
    private static let pageSize = 1_000

    /// Compares `keystore` with the check values recorded in `store`; records them when none are.
    ///
    /// - Throws: `.security` (exit 6) naming the first key file that does not match, with the hint
    ///   to restore the original `keys/` folder. Nothing has been changed at that point.
    /// A read-only workspace with no recorded check values is only read (nothing recorded).
    static func verify(_ workspace: Workspace) throws {
        let keystore = workspace.keystore, store = workspace.store
        let keysDirectory = Workspace.keysDirectory(of: workspace.directory)
        let present = keystore.fingerprints
        guard let recorded = try recordedFingerprints(in: store) else {
            if !store.isReadOnly { try record(present, in: workspace) }
            return
        }
        let pairs: [(file: String, recorded: String?, present: String)] = [
            (Keystore.piiKeyFileName, recorded["pii_key"], present.piiKey),
            (Keystore.studySecretFileName, recorded["study_secret"], present.studySecret),
            (Keystore.signingKeyFileName, recorded["signing"], present.signing),
        ]
        for pair in pairs where pair.recorded != nil && pair.recorded != pair.present {
            // A site's workspace signs with its own key, which the owner registered in the trail.
            if pair.file == Keystore.signingKeyFileName,
                let entry = try SigningKeyRegistry.load(from: store, ownKey: keystore.publicKey).registered[present.signing]
            {
                if let revokedAt = entry.revokedAt {
                    throw CohortError(
                        .security, "signing.pem is \(entry.scope)'s key, which the owner revoked at audit event \(revokedAt): it signs nothing for the study any more",
                        at: .init(file: keysDirectory.appendingPathComponent(pair.file).path),
                        hint: "ask the study owner for a new invitation and join again (`cohort site join`); nothing was changed")
                }
                continue
            }
            // A site's pii.key is a key-encryption key of its site: it counts when it unwraps that
            // site's data key (a row only the owner writes; a rotation deletes the old ones) and
            // the site is the one the workspace's signing key is registered for.
            if pair.file == Keystore.piiKeyFileName, let site = (store as? PostgresStudyStore)?.keyEncryptionSite {
                let scope = try SigningKeyRegistry.load(from: store, ownKey: keystore.publicKey).registered[present.signing]?.scope
                if scope?.site == site { continue }
            }
            if pair.file == Keystore.piiKeyFileName, store is PostgresStudyStore,
                try store.auditEvents(action: SiteInvitation.kekAction).contains(where: { $0.details["pii_key"] == present.piiKey })
            {
                throw CohortError(
                    .security, "pii.key was a key of this study's site, and no longer opens the site's identifier key (the owner rotated it: `cohort site rotate-key`)",
                    at: .init(file: keysDirectory.appendingPathComponent(pair.file).path),
                    hint: "ask the study owner for a new invitation and join again (`cohort site join`); nothing was changed")
            }
            throw CohortError(
                .security, "\(pair.file) does not match this study (its check value differs from the one recorded when the study was created)",
                at: .init(file: keysDirectory.appendingPathComponent(pair.file).path),
                hint: "\(pair.file) does not match this study: restore the original keys/ folder from its backup; nothing was changed")
        }
    }

    /// The details of the `keys.create` event among the first events, else of the first
    /// `keys.check` event anywhere in the trail; nil when neither exists.
    static func recordedFingerprints(in store: any StudyStore) throws -> [String: String]? {
        try recordedEvent(in: store)?.details
    }

    /// The event ``recordedFingerprints(in:)`` reads.
    static func recordedEvent(in store: any StudyStore) throws -> AuditEvent? {
        let first = try store.auditEvents(since: 1, limit: createdWithin, revealing: false)
        if let created = first.first(where: { $0.action == createdAction }) { return created }
        if let checked = first.first(where: { $0.action == recordedAction }) { return checked }
        guard first.count == createdWithin, let last = first.last else { return nil }
        var since = last.seq + 1
        while true {
            let page = try store.auditEvents(since: since, limit: pageSize, revealing: false)
            if let checked = page.first(where: { $0.action == createdAction || $0.action == recordedAction }) { return checked }
            guard page.count == pageSize, let last = page.last else { return nil }
            since = last.seq + 1
        }
    }

    /// Appends the `keys.check` event and signs the head (in the database and in `audit.head`).
    private static func record(_ prints: KeyFingerprints, in workspace: Workspace) throws {
        try workspace.store.appendEvent(
            actor: workspace.actor, action: recordedAction,
            details: ["signing": prints.signing, "study_secret": prints.studySecret, "pii_key": prints.piiKey], at: workspace.now())
        try workspace.checkpoint()
    }
}
