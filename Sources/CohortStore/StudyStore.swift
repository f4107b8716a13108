import CohortCore
public import Foundation
import GRDB

/// The study database: one SQLite file (WAL, foreign keys on, secure delete) opened through GRDB.
///
/// Direct identifiers are encrypted with the keystore's `pii.key` before they reach SQLite, each
/// value with a fresh nonce. Every state change appends an audit event in the same transaction.
public final class StudyStore: Sendable {
    /// The file name inside a workspace.
    public static let fileName = "study.db"

    let dbQueue: DatabaseQueue
    let piiKey: [UInt8]
    /// The database file.
    public let url: URL

    /// Opens (creating when needed, mode 0600) the database at `url` and runs pending migrations.
    /// Refuses a database written by a newer cohort.
    public init(url: URL, piiKey: [UInt8], create: Bool = false) throws {
        let path = url.path
        let fm = FileManager.default
        if !fm.fileExists(atPath: path) {
            guard create else {
                throw CohortError(.notFound, "no study database here", at: .init(file: path),
                    hint: "run `cohort init --dir <dir>` first, or pass --workspace <dir>")
            }
            guard fm.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw CohortError(.system, "cannot create the study database", at: .init(file: path), hint: "check that the folder is writable")
            }
        }
        try Self.checkPermissions(path)
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.label = "cohort"
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA secure_delete = ON")
        }
        do {
            dbQueue = try DatabaseQueue(path: path, configuration: config)
            try dbQueue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA journal_mode = WAL")
            }
        } catch {
            throw CohortError(.system, "cannot open the study database", at: .init(file: path), hint: "is it a cohort workspace?",
                underlying: Self.describe(error))
        }
        self.url = url
        self.piiKey = piiKey
        try migrate()
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

    private func migrate() throws {
        let migrator = Self.migrator
        do {
            let superseded = try dbQueue.read { db in try migrator.hasBeenSuperseded(db) }
            if superseded {
                throw CohortError(.conflict, "the study database was written by a newer version of cohort", at: .init(file: url.path),
                    hint: "upgrade cohort; this version knows schema migrations up to '\(migrator.migrations.last ?? "")'")
            }
            try migrator.migrate(dbQueue)
        } catch let error as CohortError {
            throw error
        } catch {
            throw CohortError(.system, "cannot prepare the study database", at: .init(file: url.path), underlying: Self.describe(error))
        }
    }

    /// Named, append-only migrations: never edit one that has shipped, add a new one.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-foundation") { db in
            try db.execute(sql: Schema.v1)
        }
        return migrator
    }

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

    func write<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try dbQueue.write(body)
        } catch let error as CohortError {
            throw error
        } catch let error as ProtocolValidationError {
            throw error
        } catch {
            throw CohortError(.system, "the study database refused a change", at: .init(file: url.path), underlying: Self.describe(error))
        }
    }

    func read<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try dbQueue.read(body)
        } catch let error as CohortError {
            throw error
        } catch {
            throw CohortError(.system, "cannot read the study database", at: .init(file: url.path), underlying: Self.describe(error))
        }
    }
}
