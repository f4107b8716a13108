import CohortPostgres
import CohortStore
import CohortStorePostgres
import CohortTestSupport
import Foundation
import Testing

/// One throwaway PostgreSQL cluster for this test process (started on first use, stopped at
/// exit), and a fresh database per test.
enum PostgresFixture {
    /// True when the tests can run here, and always under CI (where a missing server fails them).
    static let enabled: Bool = {
        if ProcessInfo.processInfo.environment["CI"] != nil { return true }
        if let reason = ScratchCluster.unavailableReason() {
            print("SKIP PostgreSQL store tests: \(reason)")
            return false
        }
        return true
    }()

    /// The URL of a new, empty database on the process's shared cluster.
    static func freshDatabase() throws -> String { try ScratchCluster.freshSharedDatabase(prefix: "t_") }

    static let piiKey: [UInt8] = (0..<32).map { UInt8($0 * 7 % 256) }

    /// A new study store in a fresh database, and a second connection to poke it with SQL.
    static func store() throws -> (store: PostgresStudyStore, sql: PostgresConnection, url: String) {
        let url = try freshDatabase()
        let store = try PostgresStudyStore(url: url, piiKey: piiKey, create: true)
        return (store, try PostgresConnection(url: url), url)
    }

    /// Adds a participant row with SQL (the enrolment path is the core store's) and returns its handle.
    static func participant(_ sql: PostgresConnection, code: String) throws -> (handle: ParticipantHandle, id: UUID) {
        let id = UUID()
        let rows = try sql.query(
            "INSERT INTO participants (id, code, sex, time_zone, enrolled_on, created_at) VALUES ($1, $2, 'female', 'UTC', '2026-01-01', 'test') RETURNING pk",
            [id.uuidString, code])
        let pk = try #require(rows.first?.first.flatMap { $0 }.flatMap { Int64($0) })
        return (ParticipantHandle(rowKey: pk), id)
    }

    /// The single integer `sql` selects.
    static func integer(_ sql: PostgresConnection, _ query: String) throws -> Int {
        try #require(sql.query(query).first?.first.flatMap { $0 }.flatMap { Int($0) })
    }
}
