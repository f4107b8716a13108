import CohortCore
import CohortPostgres
import CohortStorePostgres
import CohortTestSupport
import Foundation
import Synchronization

/// One throwaway PostgreSQL cluster for this test process, started on first use and stopped at
/// exit (`atexit`), so no server outlives `swift test`. Each test makes its own database.
enum SharedCluster {
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

    /// Roles are cluster-wide, and `IF NOT EXISTS … CREATE ROLE` checks and then writes: two tests
    /// making the same role at once (the site tests' logins, a site's group role) can both pass
    /// the check, and one then fails with a unique violation (SQLSTATE 23505, seen in CI under
    /// load). Every role this test process makes goes through this lock.
    static let roles = NSLock()

    /// ``PostgresSiteRoles/apply(_:url:requiredRoles:)`` under ``roles``.
    static func apply(_ statements: [String], url: String, requiredRoles: [String] = []) throws {
        try roles.withLock { try PostgresSiteRoles.apply(statements, url: url, requiredRoles: requiredRoles) }
    }

    /// A new, empty database on the process's shared cluster; a URL maker for it by user, and its name.
    static func newDatabase() throws -> (url: @Sendable (String) -> String, name: String) {
        let url = try ScratchCluster.freshSharedDatabase(prefix: "sites_")
        let name = String(url.split(separator: "/").last?.split(separator: "?").first ?? "")
        let urls = ScratchClusterURLs(template: url.replacingOccurrences(of: "/\(name)?", with: "/DBNAME?"))
        return ({ user in urls.url(user: user, database: name) }, name)
    }
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
