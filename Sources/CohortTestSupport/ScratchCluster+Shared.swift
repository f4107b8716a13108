import CohortPostgres
import Foundation
import Synchronization

/// One throwaway cluster per process, for test suites that need many databases: started on first
/// use, stopped when the process exits (`atexit`), so no server outlives `swift test`.
extension ScratchCluster {
    private static let shared = Mutex<ScratchCluster?>(nil)

    /// The URL of a new, empty database (named `prefix` + random hex) on this process's shared
    /// cluster, starting the cluster on first use.
    public static func freshSharedDatabase(prefix: String) throws -> String {
        let admin = try shared.withLock { cluster -> String in
            if let cluster { return cluster.url() }
            let started = try ScratchCluster()
            cluster = started
            atexit { ScratchCluster.stopShared() }
            return started.url()
        }
        let name = prefix + UUID().uuidString.prefix(13).lowercased().replacingOccurrences(of: "-", with: "")
        try PostgresConnection(url: admin).query("CREATE DATABASE \(name)")
        return admin.replacingOccurrences(of: "@/postgres?", with: "@/\(name)?")
    }

    /// The shared cluster's `postgres` database URL, or nil before the cluster started.
    public static var sharedAdminURL: String? { shared.withLock { $0?.url() } }

    /// Stops the shared cluster (also run at exit).
    public static func stopShared() {
        shared.withLock { cluster in
            cluster?.stop()
            cluster = nil
        }
    }
}
