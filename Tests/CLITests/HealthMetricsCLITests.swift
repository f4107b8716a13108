import CohortPostgres
import CohortTestSupport
import Foundation
import Testing

/// `cohort data import` of the app backend's health_metrics: a CSV dump, sync bodies, and the
/// real table in a throwaway PostgreSQL cluster, end to end through the binary.
@Suite(.serialized)
struct HealthMetricsCLITests {
    static let fixtures = CLI.repoRoot.appendingPathComponent("Tests/CohortImportTests/Fixtures/health-metrics")
    static var hasPostgres: Bool {
        if ProcessInfo.processInfo.environment["CI"] != nil { return true }
        if let reason = ScratchCluster.unavailableReason() {
            print("SKIP health_metrics PostgreSQL CLI test: \(reason)")
            return false
        }
        return true
    }

    static func workspace() throws -> CLI {
        let cli = try CLI()
        try FHIRImportCLITests.workspace(cli, cli.workspace)
        return cli
    }

    @Test func csvDumpAndSyncBodiesWithAUserMap() throws {
        let cli = try Self.workspace()
        defer { cli.cleanup() }
        let users = Self.fixtures.appendingPathComponent("users.csv").path
        let dump = try cli.ws("data", "import", Self.fixtures.appendingPathComponent("dump.csv").path, "--user-map", users)
        #expect(dump.status == 0, "\(dump.output)")
        #expect(dump.stdout.contains("(health-metrics-csv): 4 rows seen, 6 records imported (6 new"), "\(dump.stdout)")
        #expect(dump.stdout.contains("not imported: 2 rows of 1 users not in the user map"))
        #expect(dump.stdout.contains("skipped: 1 not collected: caffeine_mg"))
        let sync = try cli.ws("data", "import", "--from", "health-metrics", Self.fixtures.appendingPathComponent("sync.ndjson").path, "--user-map", users)
        #expect(sync.stdout.contains("(health-metrics-sync): 3 rows seen, 4 records imported (4 new"), "\(sync.output)")
        #expect(try FHIRImportCLITests.records(cli.workspace).count == 10)
        // No user map: refused before anything is read.
        let without = try cli.ws("data", "import", Self.fixtures.appendingPathComponent("dump.csv").path)
        #expect(without.status != 0 && without.stderr.contains("--user-map"))
    }

    @Test(.enabled(if: hasPostgres, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func theTableOverAPostgreSQLURL() throws {
        let cluster = try ScratchCluster()
        defer { cluster.stop() }
        let connection = try PostgresConnection(url: cluster.url())
        try connection.query("CREATE DATABASE app")
        let app = try PostgresConnection(url: cluster.url(database: "app"))
        try app.query(
            """
            CREATE TABLE health_metrics (
                id BIGSERIAL PRIMARY KEY, user_id UUID NOT NULL, recorded_at DATE NOT NULL, source TEXT NOT NULL,
                steps INTEGER, distance_meters DOUBLE PRECISION, heart_rate_avg DOUBLE PRECISION, heart_rate_min INTEGER,
                heart_rate_max INTEGER, heart_rate_resting INTEGER, heart_rate_variability DOUBLE PRECISION,
                blood_oxygen_percent DOUBLE PRECISION, respiratory_rate DOUBLE PRECISION, weight_kg DOUBLE PRECISION,
                body_fat_percent DOUBLE PRECISION, bmi DOUBLE PRECISION, sleep_hours DOUBLE PRECISION, sleep_deep_hours DOUBLE PRECISION,
                sleep_rem_hours DOUBLE PRECISION, sleep_light_hours DOUBLE PRECISION, sleep_awake_minutes INTEGER, water_ml INTEGER,
                caffeine_mg INTEGER, mindful_minutes INTEGER, timezone TEXT, raw_data JSONB, created_at TIMESTAMPTZ DEFAULT now(),
                UNIQUE (user_id, recorded_at, source))
            """)
        // 30 days for each of two mapped users and one stranger; every third day has no HRV.
        for day in 1...30 {
            for (user, zone) in [("0f8fad5b-d9cb-469f-a165-70867728950e", "Europe/Berlin"), ("7c9e6679-7425-40de-944b-e07fc1f90ae7", "America/New_York"),
                ("1b4e28ba-2fa1-11d2-883f-0016d3cca427", "Asia/Tokyo")] {
                try app.query(
                    "INSERT INTO health_metrics (user_id, recorded_at, source, steps, heart_rate_resting, heart_rate_variability, heart_rate_max, timezone, raw_data) VALUES ($1, $2, 'apple_health', $3, 60, $4, 150, $5, '{\"deviceName\": \"Ann''s iPhone\"}')",
                    [user, String(format: "2026-09-%02d", day), String(5000 + day), day % 3 == 0 ? nil : "40.5", zone])
            }
        }
        let url = cluster.url(database: "app")
        let users = Self.fixtures.appendingPathComponent("users.csv").path
        let cli = try Self.workspace()
        defer { cli.cleanup() }
        let r = try cli.ws("data", "import", "--from", url, "--table", "health_metrics", "--user-map", users, "--format", "json")
        #expect(r.status == 0, "\(r.output)")
        // Independently: 60 mapped rows × (steps + resting) + the 40 with HRV.
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        let tally = try #require(json.first?["tally"] as? [String: Any])
        #expect(tally["seen"] as? Int == 90 && tally["records"] as? Int == 160 && tally["unmapped_rows"] as? Int == 30)
        #expect(json.first?["inserted"] as? Int == 160)
        #expect(try FHIRImportCLITests.records(cli.workspace).count == 160)
        #expect(!r.output.contains("Ann's"))
    }
}
