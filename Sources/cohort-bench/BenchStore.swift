import ArgumentParser
import CohortCore
import CohortPostgres
import CohortTestSupport
import Foundation

/// Which study store `cohort-bench run` measures: SQLite (the default, as before), PostgreSQL,
/// or both in one run with the ratio between them.
enum BenchStore: String, CaseIterable, ExpressibleByArgument, Sendable {
    case sqlite
    case postgres
    case both

    /// The stores to run, in order.
    var stores: [String] {
        switch self {
        case .sqlite: ["sqlite"]
        case .postgres: ["postgres"]
        case .both: ["sqlite", "postgres"]
        }
    }
}

/// Where the PostgreSQL runs' databases come from: a throwaway cluster the bench starts (and
/// stops), or the server of `--database`, where it creates one database per run and drops it
/// afterwards (the URL's role needs CREATEDB).
final class BenchPostgresServer {
    private let cluster: ScratchCluster?
    private let baseURL: String
    private var created: [String] = []

    init(databaseURL: String?) throws {
        if let databaseURL {
            cluster = nil
            baseURL = databaseURL
        } else {
            let cluster = try ScratchCluster()
            self.cluster = cluster
            baseURL = cluster.url()
        }
    }

    deinit { stop() }

    /// A new, empty database for one run; its URL.
    func freshDatabase(label: String) throws -> String {
        // A size's name may hold a hyphen (XL-dense): the identifier keeps letters, digits and `_`.
        let safeLabel = String(label.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
        let name = "cohort_bench_\(safeLabel)_\(UUID().uuidString.prefix(8).lowercased())"
        try PostgresConnection(url: baseURL).query("CREATE DATABASE \(name)")
        created.append(name)
        guard var components = URLComponents(string: baseURL), baseURL.hasPrefix("postgres") else {
            throw CohortError(.invalidInput, "--database must be a postgresql:// URL for the benchmark", at: .init(field: "--database"),
                hint: "postgresql://user@host:5432/postgres (the bench creates and drops its own databases there)")
        }
        components.percentEncodedPath = "/" + name
        return components.string ?? baseURL
    }

    /// Keep the databases this run makes on a `--database` server (`--keep`): the kept
    /// workspaces point at them, so a phase can be run again there (`cohort-bench phase`).
    var keepsDatabases = false

    /// Drops the databases this run made (on a `--database` server, unless kept) and stops the
    /// throwaway cluster.
    func stop() {
        if let cluster {
            cluster.stop()
        } else if !keepsDatabases, let connection = try? PostgresConnection(url: baseURL) {
            for name in created { _ = try? connection.query("DROP DATABASE IF EXISTS \(name)") }
        }
        created.removeAll()
    }
}
