public import CohortCore
public import CohortCrypto
public import CohortStore
public import Foundation

/// A study workspace: a directory holding `study.db` and the keystore (`keys/`). One workspace
/// holds one study. Everything the CLI does goes through here, so tests can do it too.
public final class Workspace: Sendable {
    public let directory: URL
    public let store: StudyStore
    public let keystore: Keystore
    /// Who is acting (`--actor`, or the OS user); recorded in audit events.
    public let actor: String
    /// The clock; injected so tests are deterministic.
    public let now: @Sendable () -> Date

    public static let keysDirectoryName = "keys"

    init(directory: URL, store: StudyStore, keystore: Keystore, actor: String, now: @escaping @Sendable () -> Date) {
        self.directory = directory
        self.store = store
        self.keystore = keystore
        self.actor = actor
        self.now = now
    }

    /// The keystore directory of a workspace.
    public static func keysDirectory(of directory: URL) -> URL { directory.appendingPathComponent(keysDirectoryName, isDirectory: true) }

    /// Creates a workspace: the directory (0700), the keystore and `study.db`, and loads
    /// `protocolURL` when given. Refuses a directory that already holds a workspace.
    public static func create(
        at directory: URL, protocolURL: URL? = nil, actor: String, now: @escaping @Sendable () -> Date = { Date() }
    ) throws -> Workspace {
        let fm = FileManager.default
        let dbURL = directory.appendingPathComponent(StudyStore.fileName)
        if fm.fileExists(atPath: dbURL.path) {
            throw CohortError(.conflict, "a workspace already exists here", at: .init(file: directory.path),
                hint: "use it (`--workspace \(directory.path)`), or choose another --dir")
        }
        // Validate the protocol before creating anything, so a bad file leaves nothing behind.
        let loaded = try protocolURL.map { try ProtocolLoader.load(contentsOf: $0) }
        do {
            try fm.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw CohortError(.system, "cannot create the workspace folder", at: .init(file: directory.path), hint: "check the path and permissions")
        }
        let keysDir = keysDirectory(of: directory)
        let keystore: Keystore
        if fm.fileExists(atPath: keysDir.appendingPathComponent(Keystore.signingKeyFileName).path) {
            keystore = try Keystore.load(from: keysDir)
        } else {
            keystore = try Keystore.create(at: keysDir)
        }
        let store = try StudyStore(url: dbURL, piiKey: keystore.piiKey, create: true)
        let workspace = Workspace(directory: directory, store: store, keystore: keystore, actor: actor, now: now)
        let fp = keystore.fingerprints
        try store.appendEvent(actor: actor, action: "workspace.init", details: ["schema": "v1-foundation"], at: now())
        try store.appendEvent(
            actor: actor, action: "keys.create", details: ["signing": fp.signing, "study_secret": fp.studySecret, "pii_key": fp.piiKey], at: now())
        if let loaded { try workspace.pin(loaded) }
        try workspace.checkpoint()
        return workspace
    }

    /// Opens the workspace at `directory`.
    public static func open(at directory: URL, actor: String, now: @escaping @Sendable () -> Date = { Date() }) throws -> Workspace {
        let dbURL = directory.appendingPathComponent(StudyStore.fileName)
        guard FileManager.default.fileExists(atPath: dbURL.path) else {
            throw CohortError(.notFound, "no cohort workspace here (no \(StudyStore.fileName))", at: .init(file: directory.path),
                hint: "run `cohort init --dir \(directory.path)`, or pass --workspace <dir> (or set COHORT_WORKSPACE)")
        }
        let keystore = try Keystore.load(from: keysDirectory(of: directory))
        let store = try StudyStore(url: dbURL, piiKey: keystore.piiKey)
        try KeyCheck.verify(keystore, keysDirectory: keysDirectory(of: directory), store: store, actor: actor, at: now())
        let workspace = Workspace(directory: directory, store: store, keystore: keystore, actor: actor, now: now)
        try ExportRecovery.recover(workspace)
        return workspace
    }

    /// Signs the audit chain's head (after every command that changed state).
    @discardableResult
    public func checkpoint() throws -> AuditCheckpoint? {
        try store.checkpoint(signingKey: keystore.signingKey, at: now())
    }

    /// Loads and pins a protocol file (with the templates it names) as the current revision.
    @discardableResult
    public func loadProtocol(_ url: URL) throws -> PinnedProtocol {
        let pinned = try pin(try ProtocolLoader.load(contentsOf: url))
        try checkpoint()
        return pinned
    }

    @discardableResult
    func pin(_ loaded: LoadedProtocol) throws -> PinnedProtocol {
        var templates: [String: Data] = [:]
        let root = loaded.source.map { $0.deletingLastPathComponent().deletingLastPathComponent() } ?? directory
        var paths = loaded.studyProtocol.consent.documents.map(\.template)
        if let reminder = loaded.studyProtocol.compliance.reminderTemplate { paths.append(reminder) }
        for path in paths {
            let url = root.appendingPathComponent(path)
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw CohortError(.notFound, "template '\(path)' named by the protocol cannot be read", at: .init(file: url.path))
            }
            templates[path] = data
        }
        return try store.pinProtocol(loaded, templates: templates, actor: actor, at: now())
    }

    /// The current protocol, or an error telling how to load one.
    public func currentProtocol() throws -> PinnedProtocol {
        guard let pinned = try store.currentProtocol() else {
            throw CohortError(.notFound, "no protocol is loaded in this workspace", hint: "run `cohort protocol load protocols/<study>.yaml`")
        }
        return pinned
    }
}
