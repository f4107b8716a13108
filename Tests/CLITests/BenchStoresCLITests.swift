import CohortPostgres
import Foundation
import Testing

/// `cohort-bench --store both` on a tiny cohort: the same phases on SQLite and on a throwaway
/// PostgreSQL cluster the bench starts, the same records on both, and the PostgreSQL ÷ SQLite
/// ratios recomputed from the phases. Runs in the PostgreSQL pass of scripts/test.sh
/// (`COHORT_TEST_STORE=postgres`).
@Suite(.enabled(if: CLI.store == .postgres, "the PostgreSQL pass of scripts/test.sh runs it (COHORT_TEST_STORE=postgres)"))
struct BenchStoresCLITests {
    @Test func bothStoresMeasureTheSameRecordsAndTheRatioFollowsFromThePhases() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let dir = cli.path("bench")
        let (status, data, errors) = try BenchCLITests().runCapturingStderr(
            ["--participants", "4", "--seed", "1", "--dir", dir, "--compression", "fast", "--store", "both", "--json"])
        #expect(status == 0, "\(errors)")
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(String(decoding: data, as: UTF8.self))")
        let sizes = try #require(document["sizes"] as? [[String: Any]])
        #expect(sizes.compactMap { $0["store"] as? String } == ["sqlite", "postgres"])
        let phases = sizes.map { ($0["phases"] as? [[String: Any]]) ?? [] }
        for run in phases { for phase in run { #expect(phase["passed"] as? Bool == true, "\(phase)") } }
        // The same cohort stores and exports the same number of records on both stores.
        #expect(phases[0].first?["records"] as? Int == phases[1].first?["records"] as? Int)
        #expect(phases[0].dropFirst().first?["records"] as? Int == phases[1].dropFirst().first?["records"] as? Int)
        // The import ratio is PostgreSQL's records/s over SQLite's, from the phases' own figures.
        let comparison = try #require((document["postgres_over_sqlite"] as? [String: Any])?["custom"] as? [String: Any])
        let rows = try #require(comparison["phases"] as? [[String: Any]])
        let importRow = try #require(rows.first { $0["phase"] as? String == "import" })
        func rate(_ phase: [String: Any]?) -> Double { Double(phase?["records"] as? Int ?? 0) / (phase?["seconds"] as? Double ?? 1) }
        let expected = rate(phases[1].first) / rate(phases[0].first)
        let reported = try #require(importRow["records_per_second_ratio"] as? Double)
        #expect(abs(reported - expected) < 1e-9 * max(1, expected))
        // The bench stopped the cluster it started and removed its folder.
        #expect(!FileManager.default.fileExists(atPath: dir))
    }
}
