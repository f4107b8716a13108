import CohortPostgres
import CohortTestSupport

/// Why no throwaway PostgreSQL cluster can start here (printed when the tests are skipped).
enum ScratchClusterProbe {
    static let reason: String? = {
        let reason = ScratchCluster.unavailableReason()
        if let reason { print("SKIP PostgreSQL tests: \(reason)") }
        return reason
    }()
}
