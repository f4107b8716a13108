import ArgumentParser
import CohortCore
import CohortKit
import CohortPostgres
import CohortTestSupport
import Foundation
import CohortImport

extension CohortBench {
    /// `cohort-bench health-metrics`: the app backend's `health_metrics` table in a throwaway
    /// PostgreSQL cluster, filled with COPY, imported over its postgresql:// URL with a user map in
    /// a child process — rows/s, records/s and peak RSS.
    struct HealthMetrics: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "health-metrics",
            abstract: "Measure the health_metrics import from a local PostgreSQL table (throwaway cluster).",
            discussion: """
                Starts a ScratchCluster (Debian's PostgreSQL 15 server programs; as root they run as postgres), \
                creates the issue's health_metrics table, fills it with COPY from a generated CSV (one row per user and \
                day: steps, heart_rate_avg, heart_rate_resting, heart_rate_variability, blood_oxygen_percent, \
                sleep_hours, water_ml, timezone, raw_data), and imports it with --user-map in a child process. Each \
                user's days end on the 85th day of the study; earlier days are counted as outside the study period. \
                --size S: 5 users × 100 days (for tests); L: 2,000 users × 500 days = 1,000,000 rows.

                Example:
                  swift run -c release cohort-bench health-metrics --size L --dir /tmp/hmbench
                """)

        @Option(help: "S (500 rows) or L (1,000,000 rows).") var size: String = "S"
        @Option(help: "Folder for the user map and the workspace (replaced if it holds a previous run).") var dir: String = "cohort-bench-data/health-metrics"
        @Flag(help: "Print JSON.") var json = false
        @Option(help: .hidden) var importOnly: String?

        /// Users and days per user for a size.
        static func shape(_ size: String) -> (users: Int, days: Int)? {
            switch size.uppercased() {
            case "S": (5, 100)
            case "L": (2_000, 500)
            default: nil
            }
        }

        func validate() throws {
            guard Self.shape(size) != nil else { throw ValidationError("--size must be S or L") }
        }

        static func user(_ i: Int) -> String { String(format: "00000000-0000-4000-8000-%012d", i) }

        func run() throws {
            let base = URL(fileURLWithPath: dir, isDirectory: true)
            if let importOnly {
                let workspace = try Workspace.open(at: base.appendingPathComponent("ws"), actor: "bench", now: { AppleHealth.now })
                let clock = ContinuousClock()
                let start = clock.now
                let result = try ExternalImporter(workspace: workspace, userMap: base.appendingPathComponent("users.csv"))
                    .run(.healthMetricsTable(url: importOnly, table: "health_metrics"))
                let seconds = (clock.now - start) / .seconds(1)
                let line: [String: Double] = [
                    "seconds": seconds, "rows": Double(result.tally.seen), "records": Double(result.tally.records), "inserted": Double(result.inserted),
                    "outside": Double(result.outside.values.reduce(0, +)), "peak_rss": Double(PeakMemory.bytes()),
                ]
                print(String(decoding: try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]), as: UTF8.self))
                return
            }
            guard let shape = Self.shape(size) else { throw ValidationError("--size must be S or L") }
            let fm = FileManager.default
            try ImportBenchChild.freshFolder(base, bench: "health-metrics")
            var map = "user_id,participant\n"
            for i in 1...shape.users { map += "\(Self.user(i)),\(FHIRBulkGenerator.code(i))\n" }
            try Data(map.utf8).write(to: base.appendingPathComponent("users.csv"))

            let cluster = try ScratchCluster()
            defer { cluster.stop() }
            let admin = try PostgresConnection(url: cluster.url())
            _ = try admin.query("CREATE DATABASE app")
            let app = try PostgresConnection(url: cluster.url(database: "app"))
            _ = try app.query("""
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
            // The CSV goes into the cluster's folder, which the server (postgres when run as root) can read.
            let csv = cluster.directory.appendingPathComponent("health_metrics.csv")
            guard fm.createFile(atPath: csv.path, contents: nil), let handle = FileHandle(forWritingAtPath: csv.path) else {
                throw CohortError(.system, "cannot write the COPY input", at: .init(file: csv.path))
            }
            var buffer = ""
            var random = SeededRandom(seed: 13)
            let lastDay = CivilDate(daysSinceEpoch: 20_454 + 84)  // 2026-01-01 + 84
            for u in 1...shape.users {
                for d in 0..<shape.days {
                    let day = CivilDate(daysSinceEpoch: lastDay.daysSinceEpoch - d)
                    let hrv = d % 3 == 0 ? "" : String(30 + random.next() % 50) + ".5"
                    buffer += "\(Self.user(u)),\(day),apple_health,\(3_000 + random.next() % 9_000),\(60 + random.next() % 30).2,\(50 + random.next() % 20),\(hrv),"
                        + "\(95 + random.next() % 5),\(6 + random.next() % 3).25,\(1_000 + random.next() % 1_500),Europe/Berlin,\"{\"\"deviceName\"\": \"\"iPhone\"\"}\"\n"
                    if buffer.utf8.count >= 1 << 20 {
                        try handle.write(contentsOf: Data(buffer.utf8))
                        buffer = ""
                    }
                }
            }
            try handle.write(contentsOf: Data(buffer.utf8))
            try handle.close()
            try fm.setAttributes([.posixPermissions: 0o644], ofItemAtPath: csv.path)
            _ = try app.query("""
                COPY health_metrics (user_id, recorded_at, source, steps, heart_rate_avg, heart_rate_resting, heart_rate_variability,
                    blood_oxygen_percent, sleep_hours, water_ml, timezone, raw_data) FROM '\(csv.path)' WITH (FORMAT csv)
                """)
            let rows = Int(try app.query("SELECT count(*) FROM health_metrics").first?.first.flatMap { $0 } ?? "") ?? 0

            try ImportBenchChild.consentedWorkspace(at: base.appendingPathComponent("ws"), participants: shape.users)

            let (result, seconds) = try ImportBenchChild.run(["health-metrics", "--dir", base.path, "--import-only", cluster.url(database: "app")])
            let seen = Int(result["rows"] ?? 0)
            let inserted = Int(result["inserted"] ?? 0)
            let rss = Int(result["peak_rss"] ?? 0)
            let report: [String: Any] = [
                "size": size.uppercased(), "users": shape.users, "rows_in_table": rows, "rows_seen": seen, "records_read": Int(result["records"] ?? 0),
                "records_outside_study": Int(result["outside"] ?? 0), "records_inserted": inserted, "seconds": seconds,
                "rows_per_second": Int(Double(seen) / max(seconds, 1e-9)), "records_per_second": Int(Double(Int(result["records"] ?? 0)) / max(seconds, 1e-9)),
                "peak_rss_bytes": rss, "peak_rss_target_bytes": 100 << 20,
            ]
            if json {
                print(String(decoding: try JSONSerialization.data(withJSONObject: report, options: [.prettyPrinted, .sortedKeys]), as: UTF8.self))
            } else {
                print("health_metrics import (PostgreSQL, COPY-filled): \(shape.users) users, \(rows) rows")
                print(String(format: "  cohort: %.1f s, %d rows/s, %d records/s read (%d stored, %d outside the study), peak RSS %.1f MiB (target ≤ 100 MiB)",
                    seconds, report["rows_per_second"] as? Int ?? 0, report["records_per_second"] as? Int ?? 0, inserted, report["records_outside_study"] as? Int ?? 0,
                    Double(rss) / 1_048_576))
            }
        }
    }
}
