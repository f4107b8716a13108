import CohortCore
import CohortCrypto
import CohortPostgres
import CohortStore
import CohortStorePostgres
import CohortTestSupport
import Foundation
import Synchronization
import Testing

/// The package root, found from this file's location.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The `sqlite3` command-line tool the tamper tests edit the closed database with.
let sqlite3Path = "/usr/bin/sqlite3"
/// Whether the sqlite3-based tests run: when the tool is installed, and always under CI (which
/// installs it), so that there a missing tool fails them instead of skipping them.
let sqlite3Available: Bool = {
    let available = FileManager.default.isExecutableFile(atPath: sqlite3Path)
    if !available { print("skipping sqlite3-based tests: \(sqlite3Path) is not installed (apt-get install sqlite3)") }
    return available || ProcessInfo.processInfo.environment["CI"] != nil
}()

/// The two stores every store test that does not poke SQLite's file runs against.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    /// The stores to test here: always both, so that without PostgreSQL's server programs the
    /// PostgreSQL cases fail, naming what is missing — never dropped silently. Only an explicit
    /// `COHORT_TEST_SKIP_POSTGRES=<reason>` leaves them out, and the reason is printed; under CI
    /// the variable is ignored.
    static let tested: [StoreKind] = {
        guard let reason = skipPostgresReason(ProcessInfo.processInfo.environment) else { return allCases }
        print("leaving out the PostgreSQL runs of the store tests (COHORT_TEST_SKIP_POSTGRES): \(reason)")
        return [.sqlite]
    }()

    /// Why the PostgreSQL runs are left out, from `environment`: a non-empty
    /// `COHORT_TEST_SKIP_POSTGRES` outside CI; nil otherwise (both stores run).
    static func skipPostgresReason(_ environment: [String: String]) -> String? {
        guard environment["CI"] == nil, let reason = environment["COHORT_TEST_SKIP_POSTGRES"], !reason.isEmpty else { return nil }
        return reason
    }
}

/// The one throwaway PostgreSQL cluster of this test process, started on first use and stopped
/// when the process exits; each fixture gets a fresh database in it.
enum PostgresTestCluster {
    /// Whether the PostgreSQL tests run: the server programs are installed, or CI (which installs
    /// them, so that there a missing server fails the tests instead of skipping them).
    static let available: Bool = ScratchCluster.unavailableReason() == nil || ProcessInfo.processInfo.environment["CI"] != nil

    /// The libpq URL of a new, empty database in the process's shared cluster.
    static func newDatabase() throws -> String { try ScratchCluster.freshSharedDatabase(prefix: "store_") }

    /// Drops the database of `url` (closing any connection a test left open).
    static func drop(_ url: String) {
        guard let name = url.split(separator: "/").last?.split(separator: "?").first, let admin = ScratchCluster.sharedAdminURL else { return }
        _ = try? PostgresConnection(url: admin).query("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }
}

/// A study database — a SQLite file in a fresh temporary directory, or a fresh PostgreSQL
/// database — with its keys.
struct StoreFixture {
    let kind: StoreKind
    let directory: URL
    /// The SQLite file (SQLite fixtures).
    let url: URL
    /// The database URL (PostgreSQL fixtures).
    let databaseURL: String
    let piiKey: [UInt8]
    let signingKey: Ed25519PrivateKey

    /// Opens the fixture's store (`piiKey`: another key than the fixture's).
    func open(create: Bool = false, options: StoreOpenOptions = .init(), piiKey: [UInt8]? = nil) throws -> any StudyStore {
        switch kind {
        case .sqlite: try SQLiteStudyStore(url: url, piiKey: piiKey ?? self.piiKey, create: create, options: options)
        case .postgres: try PostgresStudyStore(url: databaseURL, piiKey: piiKey ?? self.piiKey, create: create, options: options)
        }
    }

    /// Runs `sql` on the PostgreSQL database over a connection of its own (as an operator or an
    /// attacker with the database would); every row as text.
    @discardableResult
    func postgres(_ sql: String) throws -> [[String?]] {
        try PostgresConnection(url: databaseURL).query(sql)
    }

    /// Runs `sql` on the database file with the stock `sqlite3` tool; returns its output.
    @discardableResult
    func sqlite(_ sql: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: sqlite3Path)
        process.arguments = [url.path, sql]
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CohortError(.system, "sqlite3 failed", underlying: String(decoding: errors, as: UTF8.self))
        }
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Runs `body` with a fixture of `kind` whose database does not exist yet (SQLite) or is empty
/// (PostgreSQL); removes the directory and drops the database after.
func withStoreFixture<R>(_ kind: StoreKind = .sqlite, _ body: (StoreFixture) throws -> R) throws -> R {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-store-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    var databaseURL = ""
    if kind == .postgres {
        try #require(PostgresTestCluster.available, "PostgreSQL server programs are needed: \(ScratchCluster.unavailableReason() ?? "")")
        databaseURL = try PostgresTestCluster.newDatabase()
    }
    defer { if kind == .postgres { PostgresTestCluster.drop(databaseURL) } }
    let fixture = StoreFixture(
        kind: kind, directory: directory, url: directory.appendingPathComponent(SQLiteStudyStore.fileName), databaseURL: databaseURL,
        piiKey: try SecureRandom.bytes(32), signingKey: try Ed25519PrivateKey.generate())
    return try body(fixture)
}

/// File permission bits of `path`.
func permissions(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return try #require((attributes[.posixPermissions] as? NSNumber)?.intValue)
}

let fixedDate = Date(timeIntervalSince1970: 1_741_941_000)

/// An enrollment with a recognisable identity (the values are searched for in the raw file).
func enrollment(code: String, identity: ParticipantIdentity) throws -> Enrollment {
    Enrollment(
        participant: Participant(
            id: UUID(), code: code, sex: .female, timeZone: "Europe/Berlin", enrolledOn: CivilDate(daysSinceEpoch: 20_150)),
        identity: identity, tokenSalt: try SecureRandom.bytes(16), tokenHash: try SecureRandom.bytes(32))
}

/// A thread-safe counter (callbacks from SQLite's busy handler).
final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
