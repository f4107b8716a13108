import CohortCore
import CohortPostgres
public import CohortStore
import Foundation

/// The study database on a PostgreSQL server, for multi-site studies: several coordinators,
/// each with their own workspace (keys and a config naming the database), work on one database
/// at once.
///
/// Same promises as ``SQLiteStudyStore``: identifiers, notes and redactable texts are sealed
/// with `pii.key` before they are sent; every change appends its audit event in the same
/// transaction. The audit chain has one writer at a time: the server's `cohort_append_event`
/// locks the chain just before it reads the head, so everything else in a transaction (an
/// import's COPY) runs in parallel with other coordinators.
///
/// One connection per store, used by one thread at a time (libpq's rule), guarded by a mutex.
public final class PostgresStudyStore: StudyStore {
    /// The advisory-lock key that serializes the creation of a study's schema in an empty
    /// database (`pg_advisory_xact_lock`; "cohort" + 0). Later migrations lock `cohort_migrations`.
    static let migrationLockKey: Int64 = 0x636F_686F_7274_0000

    let connection: SerializedConnection
    let piiKey: [UInt8]
    /// The keys identifiers are sealed and opened with: `piiKey`, and the data keys of the sites
    /// it unwraps from `site_data_keys` (read at open; see ``PIIKeyRing``).
    let keys: PIIKeyRing
    let url: String
    /// The URL without its password, for messages.
    public let location: String
    /// True when opened read-only (the session is `default_transaction_read_only`).
    public let isReadOnly: Bool
    let options: StoreOpenOptions

    /// Connects to `url`, creates the schema when `create` (in an empty database only), runs
    /// pending migrations, and refuses a database written by a newer cohort or one that is not a
    /// cohort study.
    public init(url: String, piiKey: [UInt8], create: Bool = false, options: StoreOpenOptions = StoreOpenOptions()) throws {
        self.url = url
        self.location = Self.redacted(url)
        self.piiKey = piiKey
        self.isReadOnly = options.readOnly
        self.options = options
        let conn = try Self.session(url: url, options: options)
        try Self.migrate(conn, create: create, readOnly: options.readOnly, location: location)
        keys = try Self.keyRing(conn, piiKey: piiKey)
        if options.readOnly { try conn.query("SET default_transaction_read_only = on") }
        connection = SerializedConnection(conn)
    }

    /// A connection to `url` with the session settings every connection of a store has: warnings
    /// only, `options`' lock and statement timeouts.
    static func session(url: String, options: StoreOpenOptions) throws -> PostgresConnection {
        let conn = try PostgresConnection(url: url)
        try conn.query("SET client_min_messages = warning")
        try conn.query("SET lock_timeout = \(max(milliseconds(options.lockTimeout), 1))")
        // 0 is PostgreSQL's "no limit".
        try conn.query("SET statement_timeout = \(options.statementTimeout.map { max(Self.milliseconds($0), 1) } ?? 0)")
        return conn
    }

    /// `duration` in whole milliseconds.
    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// `url` with any password removed (`postgresql://user:secret@host/db` → `postgresql://user@host/db`).
    public static func redacted(_ url: String) -> String {
        guard let scheme = url.range(of: "://"), let at = url[scheme.upperBound...].firstIndex(of: "@") else {
            // keyword form: drop password=…
            return url.split(separator: " ").filter { !$0.lowercased().hasPrefix("password=") }.joined(separator: " ")
        }
        let userInfo = url[scheme.upperBound..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return url }
        return String(url[..<colon]) + String(url[at...])
    }

    /// The newest migration name this version knows.
    public static var schemaVersionKnown: String { PostgresSchema.migrations.last?.name ?? "" }

    /// The newest migration (every migration has run once the store is open).
    public var schemaVersion: String { Self.schemaVersionKnown }

    /// A PostgreSQL database can be written unless the server refuses (roles decide).
    public var canBeWritten: Bool { true }

    /// The same database with `options`.
    public func reopened(options: StoreOpenOptions) throws -> any StudyStore {
        try PostgresStudyStore(url: url, piiKey: piiKey, options: options)
    }

    static func migrate(_ conn: PostgresConnection, create: Bool, readOnly: Bool, location: String) throws {
        let hasTable = try conn.query("SELECT to_regclass('cohort_migrations') IS NOT NULL").first?.first ?? nil
        if hasTable != "t" {
            let tables = try conn.query("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()").first?.first ?? nil
            guard create, !readOnly else {
                throw CohortError(.integrity, "this PostgreSQL database is not a cohort study database (it has no cohort schema)",
                    at: .init(file: location),
                    hint: "check the database URL; only `cohort init --database <url>` turns an empty database into a study")
            }
            guard tables == "0" else {
                throw CohortError(.conflict, "this PostgreSQL database already has tables that are not a cohort study", at: .init(file: location),
                    hint: "create an empty database for the study (createdb) and pass its URL to `cohort init --database`")
            }
        }
        let known = PostgresSchema.migrations.map(\.name)
        if hasTable == "t" {
            // Up to date: no lock at all, so no coordinator waits for another to open the study.
            let applied = Set(try conn.query("SELECT name FROM cohort_migrations").compactMap { $0.first ?? nil })
            if applied.isSuperset(of: known) && applied.count == known.count { return }
        }
        try conn.transaction {
            // One migrator at a time: a lock on the migration table, which only its owner can take
            // (an advisory lock, which any role can take and hold, only while there is no table).
            if hasTable == "t" {
                do {
                    try conn.query("LOCK TABLE cohort_migrations IN SHARE ROW EXCLUSIVE MODE")
                } catch let error as CohortError where error.cause == .sqlState("42501") {
                    throw CohortError(
                        .conflict, "the study database has an older schema, and only the owner of its tables can upgrade it (this role is a coordinator's)",
                        at: .init(file: location), hint: "run any cohort command once from the study owner's workspace with this version of cohort",
                        cause: error.cause)
                }
            } else {
                try conn.query("SELECT pg_advisory_xact_lock(\(migrationLockKey))")
                // Only the creator creates it: CREATE … IF NOT EXISTS needs the schema's CREATE privilege, which coordinators lack.
                try conn.query("CREATE TABLE IF NOT EXISTS cohort_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
            }
            let applied = Set(try conn.query("SELECT name FROM cohort_migrations").compactMap { $0.first ?? nil })
            if let unknown = applied.subtracting(known).sorted().first {
                throw CohortError(.conflict, "the study database was written by a newer version of cohort (migration '\(unknown)')",
                    at: .init(file: location), hint: "upgrade cohort; this version knows schema migrations up to '\(known.last ?? "")'")
            }
            let pending = PostgresSchema.migrations.filter { !applied.contains($0.name) }
            if pending.isEmpty { return }
            if readOnly {
                throw CohortError(.conflict, "the study database has an older schema and this command opens it read-only", at: .init(file: location),
                    hint: "run a command that changes the study (for example `cohort protocol load`) once to upgrade it")
            }
            for migration in pending {
                // A migration is several statements and the extended query protocol takes one: run it as one DO block.
                try conn.query("DO $cohort_migration$ BEGIN\n\(migration.sql)\nEND $cohort_migration$")
                try conn.query("INSERT INTO cohort_migrations (name) VALUES ($1)", [migration.name])
            }
        }
    }
}
