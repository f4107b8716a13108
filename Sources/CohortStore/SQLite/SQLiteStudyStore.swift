import CohortCore
import CohortCrypto
public import Foundation
import GRDB
import Synchronization

/// The embedded study database: one SQLite file (WAL, foreign keys on, secure delete) opened through GRDB.
///
/// Direct identifiers, free-text notes and redactable audit texts are encrypted with the
/// keystore's `pii.key` before they reach SQLite, each value with a fresh nonce and associated
/// data naming its row and field. Every state change appends an audit event in the same
/// transaction.
public final class SQLiteStudyStore: StudyStore {
    /// The file name inside a workspace.
    public static let fileName = "study.db"

    let dbQueue: DatabaseQueue
    let piiKey: [UInt8]
    let lockTimeout: Duration
    /// The database file.
    public let url: URL
    /// True when opened read-only.
    public let isReadOnly: Bool

    /// Opens (creating when needed, mode 0600) the database at `url` and runs pending migrations.
    /// Refuses a database written by a newer cohort, and — unless `create` — an empty or foreign
    /// file: only `cohort init` may turn a file into a study database.
    public init(url: URL, piiKey: [UInt8], create: Bool = false, options: StoreOpenOptions = StoreOpenOptions()) throws {
        let path = url.path
        let fm = FileManager.default
        if !fm.fileExists(atPath: path) {
            guard create, !options.readOnly else {
                throw CohortError(.notFound, "no study database here", at: .init(file: path),
                    hint: "run `cohort init -w <dir>` first, or pass --workspace <dir>")
            }
            guard fm.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw CohortError(.system, "cannot create the study database", at: .init(file: path), hint: "check that the folder is writable")
            }
        } else if !create, Self.fileSize(path) == 0 {
            throw CohortError(.integrity, "the study database is an empty file (0 bytes): its tables and audit trail are gone",
                at: .init(file: path),
                hint: "restore study.db from a backup; cohort will not turn an empty file into a new study (only `cohort init` creates one)")
        }
        try Self.checkPermissions(path)
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.label = "cohort"
        config.readonly = options.readOnly
        config.busyMode = .callback(Self.busyCallback(timeout: options.lockTimeout, onWaiting: options.onWaiting))
        if !options.readOnly {
            config.prepareDatabase { db in
                try db.execute(sql: "PRAGMA secure_delete = ON")
            }
        }
        self.url = url
        self.piiKey = piiKey
        self.lockTimeout = options.lockTimeout
        self.isReadOnly = options.readOnly
        do {
            dbQueue = try DatabaseQueue(path: Self.openPath(path, readOnly: options.readOnly), configuration: config)
            if !options.readOnly {
                try dbQueue.writeWithoutTransaction { db in
                    // A new database gets 16 KiB pages (SQLite's default is 4 KiB): fewer b-tree
                    // pages and write-ahead-log frames per imported row (issue 28). It must be
                    // set before the first table and the WAL exist; on any existing database it
                    // does nothing (its page size stays until a VACUUM outside WAL mode).
                    try db.execute(sql: "PRAGMA page_size = \(Self.pageSize)")
                    try db.execute(sql: "PRAGMA journal_mode = WAL")
                }
            }
        } catch {
            throw Self.openError(error, path: path, lockTimeout: options.lockTimeout)
        }
        try migrate(create: create, onUpgrading: options.onUpgrading)
    }

    /// The page size of a database this store creates.
    static let pageSize = 16_384

    static func fileSize(_ path: String) -> Int64? {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value
    }

    /// The path (or SQLite URI) to open. A read-only copy — study.db without write permission
    /// bits, or in a folder we may not write — with no write-ahead log beside it is opened as
    /// immutable: SQLite could not create its shared-memory file, and nothing may change the
    /// copy. (Mode bits, not only access(2), so a copy is treated alike when running as root.)
    static func openPath(_ path: String, readOnly: Bool) -> String {
        guard readOnly else { return path }
        let folder = (path as NSString).deletingLastPathComponent
        let walSize = fileSize(path + "-wal") ?? 0
        let mode = ((try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? NSNumber)?.intValue ?? 0o600
        let readOnlyCopy = mode & 0o222 == 0 || access(folder.isEmpty ? "." : folder, W_OK) != 0
        guard readOnlyCopy, walSize == 0 else { return path }
        return URL(fileURLWithPath: path).absoluteString + "?mode=ro&immutable=1"
    }

    static func openError(_ error: any Error, path: String, lockTimeout: Duration) -> CohortError {
        if let error = error as? CohortError { return error }
        if let error = error as? DatabaseError {
            if error.resultCode.primaryResultCode == .SQLITE_NOTADB {
                return CohortError(.integrity, "the study database is not an SQLite database (replaced or damaged)", at: .init(file: path),
                    hint: "restore study.db from a backup; only `cohort init` creates a new study")
            }
            if error.resultCode.primaryResultCode == .SQLITE_BUSY { return lockError(path: path, timeout: lockTimeout) }
        }
        return CohortError(.system, "cannot open the study database", at: .init(file: path), hint: "is it a cohort workspace?",
            underlying: describe(error))
    }

    static func lockError(path: String, timeout: Duration) -> CohortError {
        CohortError(.conflict, "another cohort command has held the study database's write lock for more than \(timeout.secondsText) s",
            at: .init(file: path),
            hint: "wait for the other command to finish and run this again; allow a longer wait with COHORT_LOCK_TIMEOUT=<seconds>")
    }

    /// SQLite's busy handler: sleep and retry until `timeout`, announcing the wait once after 1 s.
    static func busyCallback(timeout: Duration, onWaiting: (@Sendable () -> Void)?) -> Database.BusyCallback {
        let state = LockWait()
        return { tries in
            let now = ContinuousClock.now
            let (elapsed, announce) = state.wait.withLock { wait -> (Duration, Bool) in
                let start = (tries == 0 ? nil : wait.start) ?? now
                wait.start = start
                let elapsed = now - start
                let announce = elapsed >= .seconds(1) && !wait.announced
                if announce { wait.announced = true }
                return (elapsed, announce)
            }
            if announce { onWaiting?() }
            guard elapsed < timeout else { return false }
            usleep(20_000)
            return true
        }
    }

    static func checkPermissions(_ path: String) throws {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue
        else { return }
        if mode & 0o077 != 0 {
            throw CohortError(.security, "the study database may be read by group or others (mode \(String(mode, radix: 8)))",
                at: .init(file: path), hint: "run: chmod 600 \(path)")
        }
    }

    private func migrate(create: Bool, onUpgrading: (@Sendable () -> Void)?) throws {
        let migrator = Self.migrator(piiKey: piiKey)
        do {
            let (superseded, complete, isCohort) = try dbQueue.read { db in
                let isCohort = try db.tableExists("grdb_migrations")
                    && (try Bool.fetchOne(db, sql: "SELECT 1 FROM grdb_migrations WHERE identifier = 'v1-foundation'") ?? false)
                    && (try db.tableExists("audit_events"))
                let empty = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") == 0
                guard isCohort else { return (false, false, empty && create ? true : false) }
                return (try migrator.hasBeenSuperseded(db), try migrator.hasCompletedMigrations(db), true)
            }
            if !isCohort {
                throw CohortError(.integrity, "this file is not a cohort study database (it has no cohort schema or audit trail)",
                    at: .init(file: url.path),
                    hint: "restore study.db from a backup; cohort will not migrate a foreign or emptied database (only `cohort init` creates one)")
            }
            if superseded {
                throw CohortError(.conflict, "the study database was written by a newer version of cohort", at: .init(file: url.path),
                    hint: "upgrade cohort; this version knows schema migrations up to '\(migrator.migrations.last ?? "")'")
            }
            if complete { return }
            if isReadOnly {
                throw CohortError(.conflict, "the study database has an older schema and this command opens it read-only", at: .init(file: url.path),
                    hint: "run a command that changes the study (for example `cohort protocol load`) on a writable copy once to upgrade it")
            }
            let (upgrades, rebuildsRecords) = try dbQueue.read { db in
                let applied = try migrator.appliedIdentifiers(db)
                return (!applied.isEmpty, try !applied.contains(Self.recordsByKey) && db.tableExists("records"))
            }
            if upgrades { onUpgrading?() }
            try migrator.migrate(dbQueue)
            // `v6-records-by-key` copied `records` into a new table: its old pages are free (and
            // zeroed: secure_delete) but still in the file. Given back once, outside the
            // migration's transaction (VACUUM cannot run inside one). Best effort: the upgrade
            // is committed, and a VACUUM refused (another command's lock, a full disk) leaves
            // only free pages, which later imports reuse — not a reason to fail this command.
            if rebuildsRecords { try? dbQueue.vacuum() }
        } catch let error as CohortError {
            throw error
        } catch {
            if let error = error as? DatabaseError, error.resultCode.primaryResultCode == .SQLITE_BUSY {
                throw Self.lockError(path: url.path, timeout: lockTimeout)
            }
            throw CohortError(.system, "cannot prepare the study database", at: .init(file: url.path), underlying: Self.describe(error))
        }
    }

    /// The migration that clusters `records` on its key (``Schema/v6``).
    static let recordsByKey = "v6-records-by-key"

    /// Named, append-only migrations: never edit one that has shipped, add a new one.
    static func migrator(piiKey: [UInt8]) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-foundation") { db in
            try db.execute(sql: Schema.v1)
        }
        migrator.registerMigration("v2-private-text") { db in
            try db.execute(sql: Schema.v2)
            try Self.encryptPlaintextNotes(db, piiKey: piiKey)
            try Self.moveWithdrawalTextsToRedactable(db, piiKey: piiKey)
            try Self.moveBatchActorsToRedactable(db, piiKey: piiKey)
        }
        migrator.registerMigration("v3-sites") { db in
            try db.execute(sql: Schema.v3)
        }
        migrator.registerMigration("v4-sharing-scopes") { db in
            try db.execute(sql: Schema.v4)
        }
        migrator.registerMigration("v5-no-plaintext-note") { db in
            try db.execute(sql: Schema.v5)
        }
        migrator.registerMigration(recordsByKey) { db in
            try db.execute(sql: Schema.v6)
        }
        return migrator
    }

    /// The name of the newest migration this version knows.
    public static var schemaVersion: String { migrator(piiKey: []).migrations.last ?? "" }

    /// The database file's path.
    public var location: String { url.path }

    /// The newest migration (every migration has run once the store is open).
    public var schemaVersion: String { Self.schemaVersion }

    /// False for an auditor's copy: study.db or its folder not writable.
    public var canBeWritten: Bool {
        let folder = url.deletingLastPathComponent().path
        return access(url.path, W_OK) == 0 && access(folder.isEmpty ? "." : folder, W_OK) == 0
    }

    /// The same file opened again with `options`.
    public func reopened(options: StoreOpenOptions) throws -> any StudyStore {
        try SQLiteStudyStore(url: url, piiKey: piiKey, options: options)
    }

    /// Truncates the write-ahead log after an erase (see ``checkpointAndTruncateLog()``).
    public func purgeDeletedData() throws { try checkpointAndTruncateLog() }

    /// Copies the write-ahead log into the database file and truncates it, so deleted data does not
    /// linger in `study.db-wal` (used after an erase).
    public func checkpointAndTruncateLog() throws {
        try dbQueue.writeWithoutTransaction { db in
            _ = try Row.fetchAll(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    /// A message for an underlying database error that never includes bound values (GRDB
    /// redacts statement arguments by default).
    static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError {
            return "SQLite error \(error.resultCode.rawValue): \(error.message ?? "unknown")"
        }
        return String(describing: type(of: error))
    }

    /// Runs `body` in a write transaction. `bulkRecords` (the import's transaction,
    /// ``importTransaction(_:)``): `temp_store` is MEMORY when the transaction begins (SQLite
    /// decides where statement journals go then) and foreign keys are not enforced row by row
    /// (a pragma SQLite ignores inside a transaction, so it is set before); both are back to the
    /// store's settings after it, whether it commits or not.
    func write<T>(bulkRecords: Bool = false, _ body: (Database) throws -> T) throws -> T {
        do {
            guard bulkRecords else { return try dbQueue.write(body) }
            return try dbQueue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA temp_store = MEMORY; PRAGMA foreign_keys = OFF")
                defer { try? db.execute(sql: "PRAGMA temp_store = DEFAULT; PRAGMA foreign_keys = ON") }
                var result: T?
                try db.inTransaction {
                    result = try body(db)
                    return .commit
                }
                guard let result else { throw CohortError(.system, "the import transaction ended without a result") }
                return result
            }
        } catch let error as CohortError {
            throw locating(error)
        } catch let error as ProtocolValidationError {
            throw error
        } catch {
            if let error = error as? DatabaseError, error.resultCode.primaryResultCode == .SQLITE_BUSY {
                throw Self.lockError(path: url.path, timeout: lockTimeout)
            }
            if isReadOnly, let error = error as? DatabaseError, error.resultCode.primaryResultCode == .SQLITE_READONLY {
                throw CohortError(.system, "this command opened the study database read-only and cannot change it", at: .init(file: url.path))
            }
            throw CohortError(.system, "the study database refused a change", at: .init(file: url.path), underlying: Self.describe(error))
        }
    }

    /// `error` with this database's path where a record type named only `study.db` (see
    /// ``RowReader``).
    func locating(_ error: CohortError) -> CohortError {
        guard error.location?.file == Self.fileName else { return error }
        var located = error
        located.location?.file = url.path
        return located
    }

    func read<T>(_ body: (Database) throws -> T) throws -> T {
        try read(on: dbQueue, body)
    }

    /// `body` in a read transaction of `queue` (the store's connection or a reader's), its
    /// errors named as the store names them.
    func read<T>(on queue: DatabaseQueue, _ body: (Database) throws -> T) throws -> T {
        do {
            return try queue.read(body)
        } catch let error as CohortError {
            throw locating(error)
        } catch {
            throw CohortError(.system, "cannot read the study database", at: .init(file: url.path), underlying: Self.describe(error))
        }
    }
}

/// The state of one wait for the database lock, shared with SQLite's busy handler.
final class LockWait: Sendable {
    struct State {
        var start: ContinuousClock.Instant?
        var announced = false
    }
    let wait = Mutex(State())
}

extension Duration {
    /// Whole seconds, or seconds with one decimal below 10 s.
    var secondsText: String {
        let seconds = Double(components.seconds) + Double(components.attoseconds) / 1e18
        return seconds >= 10 || seconds == seconds.rounded() ? String(Int(seconds.rounded())) : String(format: "%.1f", seconds)
    }
}
