import CohortCrypto
import CohortCore
import CohortStore
public import Foundation

extension Workspace {
    /// Opens the workspace at `directory` the way a command run from a shell does: the lock
    /// timeout comes from `COHORT_LOCK_TIMEOUT` in `environment`, `onWaiting` is called once
    /// when another command holds the database, and `onUpgrading` once before an older database's
    /// schema is upgraded. Read-only commands pass `readOnly`.
    public static func openForCommand(
        at directory: URL, actor: String, readOnly: Bool, checkingAuditHead: Bool = true, environment: [String: String],
        onUpgrading: (@Sendable () -> Void)? = nil, onWaiting: (@Sendable () -> Void)?
    ) throws -> Workspace {
        let options = try StoreOpenOptions.command(readOnly: readOnly, environment: environment, onWaiting: onWaiting, onUpgrading: onUpgrading)
        return try open(at: directory, actor: actor, options: options, checkingAuditHead: checkingAuditHead, environment: environment)
    }

    /// Opens a workspace read-only for verification (`cohort verify -w`).
    public static func openForVerification(at directory: URL) throws -> Workspace {
        try open(at: directory, actor: "verifier", options: .init(readOnly: true))
    }

    /// Where the study database is: the path of `study.db`, or the PostgreSQL URL (no password).
    public var databaseLocation: String { store.location }

    /// The pinned protocol's id, revision and SHA-256, or nil before one is loaded.
    public func pinnedProtocolSummary() throws -> (id: String, revision: Int, sha256: String)? {
        guard let pinned = try store.currentProtocol() else { return nil }
        return (pinned.studyProtocol.id, pinned.studyProtocol.revision, pinned.sha256)
    }

    /// The signing key's fingerprint (safe to print).
    public var signingKeyFingerprint: String { keystore.fingerprints.signing }
}
