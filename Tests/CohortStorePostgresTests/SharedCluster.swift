import CohortCore
import CohortPostgres
import Foundation
import Synchronization

/// One throwaway PostgreSQL cluster for this test process, started on first use and stopped at
/// exit (`atexit`), so no server outlives `swift test`. Each test makes its own database.
final class SharedCluster: Sendable {
    static let instance = SharedCluster()
    private let cluster = Mutex<ScratchCluster?>(nil)

    /// True where PostgreSQL tests must run: in CI (`CI` set, where a missing server is a
    /// failure), or where the server programs are installed.
    static var available: Bool {
        if ProcessInfo.processInfo.environment["CI"] != nil { return true }
        if let reason = ScratchCluster.unavailableReason() {
            print("SKIP PostgreSQL site-security tests: \(reason)")
            return false
        }
        return true
    }

    /// A new, empty database on the shared cluster; returns the cluster URL maker for it.
    func newDatabase() throws -> (url: @Sendable (String) -> String, name: String) {
        let base = try cluster.withLock { state -> ScratchClusterURLs in
            if state == nil {
                state = try ScratchCluster()
                atexit { SharedCluster.instance.stop() }
            }
            guard let running = state else { throw CohortError(.system, "the test cluster did not start") }
            return ScratchClusterURLs(template: running.url(database: "DBNAME"))
        }
        let name = "sites_" + UUID().uuidString.prefix(8).lowercased()
        try PostgresConnection(url: base.url(user: nil, database: "postgres")).query("CREATE DATABASE \(name)")
        return ({ user in base.url(user: user, database: name) }, name)
    }

    func stop() { cluster.withLock { $0?.stop(); $0 = nil } }
}

/// The cluster's URL with another user or database (the socket cluster trusts local users).
struct ScratchClusterURLs: Sendable {
    let template: String  // postgresql://postgres@/DBNAME?host=…&port=…

    func url(user: String?, database: String) -> String {
        var url = template.replacingOccurrences(of: "/DBNAME?", with: "/\(database)?")
        if let user { url = url.replacingOccurrences(of: "postgresql://postgres@", with: "postgresql://\(user)@") }
        return url
    }
}
