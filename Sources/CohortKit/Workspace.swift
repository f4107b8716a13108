import CohortCore
public import CohortCrypto
public import CohortStore
import CohortStorePostgres
public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A study workspace: a directory holding the keystore (`keys/`) and the study database — its own
/// `study.db` (SQLite), or a `store.json` naming a PostgreSQL database that several coordinators'
/// workspaces share (see ``StoreConfiguration``). One workspace holds one study. Everything the
/// CLI does goes through here, so tests can do it too.
public final class Workspace: Sendable {
    /// The workspace folder.
    public let directory: URL
    /// The study database (`study.db`, or the PostgreSQL database `store.json` names).
    public let store: any StudyStore
    /// The workspace's keys (`keys/`).
    public let keystore: Keystore
    /// Who is acting (`--actor`, or the OS user); recorded in audit events.
    public let actor: String
    /// The clock; injected so tests are deterministic.
    public let now: @Sendable () -> Date

    /// The keystore folder's name inside the workspace.
    public static let keysDirectoryName = "keys"
    /// The signed head of the audit chain, kept outside the database next to `study.db`.
    public static let auditHeadFileName = "audit.head"

    /// The `audit.head` file of this workspace.
    public var auditHeadURL: URL { directory.appendingPathComponent(Self.auditHeadFileName) }

    /// The actor recorded in the audit trail: `explicit` (`--actor`) when given, else the OS
    /// account of the effective user (`getpwuid(geteuid())` — not `$USER`, which anyone can set).
    public static func actorName(explicit: String?) -> String {
        if let explicit, !explicit.trimmingCharacters(in: .whitespaces).isEmpty { return explicit }
        let uid = geteuid()
        if let entry = getpwuid(uid), let name = entry.pointee.pw_name {
            let text = String(cString: name)
            if !text.isEmpty { return text }
        }
        return "uid-\(uid)"
    }

    init(directory: URL, store: any StudyStore, keystore: Keystore, actor: String, now: @escaping @Sendable () -> Date) {
        self.directory = directory
        self.store = store
        self.keystore = keystore
        self.actor = actor
        self.now = now
    }

    /// The keystore directory of a workspace.
    public static func keysDirectory(of directory: URL) -> URL { directory.appendingPathComponent(keysDirectoryName, isDirectory: true) }

    /// Creates a workspace: the directory (0700), the keystore and the study database, and loads
    /// `protocolURL` when given. The database is `study.db` in the folder, or, with
    /// `databaseURL`, an empty PostgreSQL database, named in `store.json` (without password).
    /// Refuses a directory that already holds a workspace, and a database that already holds a
    /// study (a site coordinator joins with `cohort site invite` / `cohort site join` instead).
    public static func create(
        at directory: URL, protocolURL: URL? = nil, actor: String, databaseURL: String? = nil, now: @escaping @Sendable () -> Date = { Date() }
    ) throws -> Workspace {
        let fm = FileManager.default
        let dbURL = directory.appendingPathComponent(SQLiteStudyStore.fileName)
        if fm.fileExists(atPath: dbURL.path) || fm.fileExists(atPath: StoreConfiguration.fileURL(in: directory).path) {
            throw CohortError(.conflict, "a workspace already exists here", at: .init(file: directory.path),
                hint: "use it (`--workspace \(directory.path)`), or choose another -w/--workspace folder")
        }
        if let databaseURL, !StoreConfiguration.isPostgreSQLURL(databaseURL) {
            throw CohortError(.invalidInput, "the database URL is not a PostgreSQL URL", at: .init(field: "--database"),
                hint: "give postgresql://user@host:5432/dbname (the password in PGPASSWORD or ~/.pgpass)")
        }
        // Validate the protocol before creating anything, so a bad file leaves nothing behind.
        let loaded = try protocolURL.map { try ProtocolLoader.load(contentsOf: $0) }
        let folderExisted = fm.fileExists(atPath: directory.path)
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
        let store: any StudyStore
        if let databaseURL {
            do {
                let postgres = try PostgresStudyStore(url: databaseURL, piiKey: keystore.piiKey, create: true)
                // A database another coordinator already made a study in: new keys here could read
                // none of its data, and a second workspace.init would fork the story.
                if (try postgres.counts()["audit_events"] ?? 0) > 0 {
                    throw CohortError(.conflict, "this PostgreSQL database already holds a cohort study", at: .init(file: postgres.location),
                        hint: "to join it, ask the study owner for an invitation (`cohort site invite`) and run `cohort site join DIR -w WORKSPACE`; to start a new study, create an empty database (createdb)")
                }
                try StoreConfiguration(postgresqlURL: databaseURL).write(to: directory)
                store = postgres
            } catch {
                // Keys made for a database that refused them would be a workspace of nothing.
                if !folderExisted { try? fm.removeItem(at: directory) }
                throw error
            }
        } else {
            store = try SQLiteStudyStore(url: dbURL, piiKey: keystore.piiKey, create: true)
        }
        let workspace = Workspace(directory: directory, store: store, keystore: keystore, actor: actor, now: now)
        let fp = keystore.fingerprints
        // `audit_head` records in the chain that this workspace keeps audit.head, so a deleted
        // file is noticed.
        try store.appendEvent(
            actor: actor, action: "workspace.init", details: ["schema": store.schemaVersion, "audit_head": auditHeadFileName], at: now())
        try store.appendEvent(
            actor: actor, action: "keys.create", details: ["signing": fp.signing, "study_secret": fp.studySecret, "pii_key": fp.piiKey], at: now())
        if let loaded { try workspace.pin(loaded) }
        try workspace.checkpoint()
        return workspace
    }

    /// Opens the workspace at `directory`, and refuses (an integrity error) a database that does
    /// not reach the event its `audit.head` names — events removed, or the database rolled back or
    /// replaced — unless `checkingAuditHead` is false (`cohort audit verify` reports it instead).
    /// A workspace with a `store.json` opens its PostgreSQL database (the URL from
    /// `COHORT_DATABASE_URL` in `environment` when set).
    public static func open(
        at directory: URL, actor: String, now: @escaping @Sendable () -> Date = { Date() }, options: StoreOpenOptions = .init(),
        checkingAuditHead: Bool = true, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> Workspace {
        let dbURL = directory.appendingPathComponent(SQLiteStudyStore.fileName)
        let configuration = try StoreConfiguration.load(from: directory)
        guard configuration != nil || FileManager.default.fileExists(atPath: dbURL.path) else {
            throw CohortError(.notFound, "no cohort workspace here (no \(SQLiteStudyStore.fileName) or \(StoreConfiguration.fileName))", at: .init(file: directory.path),
                hint: "run `cohort init -w \(directory.path)`, or pass --workspace <dir> (or set COHORT_WORKSPACE)")
        }
        let keystore = try Keystore.load(from: keysDirectory(of: directory))
        let store: any StudyStore =
            if let configuration {
                try PostgresStudyStore(url: configuration.connectionURL(environment: environment), piiKey: keystore.piiKey, options: options)
            } else {
                try SQLiteStudyStore(url: dbURL, piiKey: keystore.piiKey, options: options)
            }
        let workspace = Workspace(directory: directory, store: store, keystore: keystore, actor: actor, now: now)
        // Checked before anything is written: the keys first (nothing encrypted can be read
        // with a wrong pii.key), then a shortened trail, then exports a killed command left open.
        try KeyCheck.verify(workspace)
        if checkingAuditHead, let problem = try workspace.auditHeadProblem() {
            throw CohortError(.integrity, problem, at: .init(file: workspace.auditHeadURL.path),
                hint: "run `cohort audit verify` for the details; restore study.db (with its audit trail) from a backup. Nothing was changed.")
        }
        try ExportRecovery.recoverIfPending(workspace, directory: directory, options: options, keystore: keystore)
        return workspace
    }
}
