import CohortCore
import CohortKit
import CohortPostgres
import CohortStorePostgres
import CohortTestSupport
import Foundation
import Testing

/// The workspace's `store.json` (a study on PostgreSQL) and how `cohort init --database` and
/// `Workspace.open` use it.
struct StoreConfigurationTests {
    static var hasPostgres: Bool {
        if ProcessInfo.processInfo.environment["CI"] != nil { return true }
        if let reason = ScratchCluster.unavailableReason() {
            print("SKIP StoreConfiguration PostgreSQL tests: \(reason)")
            return false
        }
        return true
    }

    private func temporary() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("storeconfig-\(UUID().uuidString)")
    }

    @Test func theConfigurationKeepsNoPasswordAndIsPrivate() throws {
        let directory = temporary()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = StoreConfiguration(postgresqlURL: "postgresql://coordinator:s3cret-pass@db.example.org:5432/axspa")
        #expect(configuration.url == "postgresql://coordinator@db.example.org:5432/axspa")
        #expect(StoreConfiguration(postgresqlURL: "host=/run dbname=axspa password=s3cret-pass").url == "host=/run dbname=axspa")
        try configuration.writeForTesting(to: directory)
        let file = StoreConfiguration.fileURL(in: directory)
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(!text.contains("s3cret"))
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        #expect(try StoreConfiguration.load(from: directory) == configuration)
        // COHORT_DATABASE_URL wins over the file (CI, secrets managers); without it, the file's URL.
        #expect(configuration.connectionURLForTesting(environment: ["COHORT_DATABASE_URL": "postgresql://ci@/t"]) == "postgresql://ci@/t")
        #expect(configuration.connectionURLForTesting(environment: [:]) == configuration.url)
    }

    @Test func aDamagedConfigurationIsRefusedWithWhatWasExpected() throws {
        let directory = temporary()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(#"{"kind": "oracle"}"#.utf8).write(to: StoreConfiguration.fileURL(in: directory))
        let error = #expect(throws: CohortError.self) { try StoreConfiguration.load(from: directory) }
        #expect(error?.location?.file == StoreConfiguration.fileURL(in: directory).path)
        #expect(error?.hint?.contains("cohort/store@1") == true)
        // And a workspace with it does not open as a SQLite workspace by mistake.
        #expect(throws: CohortError.self) { try Workspace.open(at: directory, actor: "test") }
    }

    @Test func initRefusesAURLThatIsNotPostgreSQLAndLeavesNothing() throws {
        let directory = temporary()
        defer { try? FileManager.default.removeItem(at: directory) }
        let error = #expect(throws: CohortError.self) { try Workspace.create(at: directory, actor: "test", databaseURL: "mysql://db/axspa") }
        #expect(error?.location?.field == "--database")
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }

    @Test(.enabled(if: hasPostgres, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func initRefusesADatabaseThatAlreadyHoldsAStudy() throws {
        let cluster = try ScratchCluster()
        defer { cluster.stop() }
        try PostgresConnection(url: cluster.url()).query("CREATE DATABASE study")
        let url = cluster.url(database: "study")
        // Another coordinator's study: the schema, and a trail.
        _ = try PostgresStudyStore(url: url, piiKey: [UInt8](repeating: 1, count: 32), create: true)
        try PostgresConnection(url: url).query(
            "INSERT INTO audit_events (seq, at, actor, action, details, details_text, prev_hash, hash) VALUES (1, 'x', 'x', 'workspace.init', '{}', '{}', 'x', 'x')")
        let directory = temporary()
        defer { try? FileManager.default.removeItem(at: directory) }
        let error = #expect(throws: CohortError.self) { try Workspace.create(at: directory, actor: "second", databaseURL: url) }
        #expect(error?.message.contains("already holds a cohort study") == true)
        #expect(error?.hint?.contains("cohort site join DIR") == true)
        // No keys were left behind for a study they cannot read.
        #expect(!FileManager.default.fileExists(atPath: directory.path))
        // A database that is not empty and not a study is refused too.
        try PostgresConnection(url: cluster.url()).query("CREATE DATABASE other")
        try PostgresConnection(url: cluster.url(database: "other")).query("CREATE TABLE patients (id int)")
        #expect(throws: CohortError.self) { try Workspace.create(at: directory, actor: "second", databaseURL: cluster.url(database: "other")) }
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }
}
