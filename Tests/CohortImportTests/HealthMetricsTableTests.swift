import CohortIO
import CohortCore
import CohortImport
import CohortPostgres
import CohortTestSupport
import Foundation
import Testing

/// The real `health_metrics` table in a throwaway PostgreSQL cluster, read with COPY.
@Suite(.serialized, .enabled(if: Fixtures.hasPostgres, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
struct HealthMetricsTableTests {
    /// The issue's table: one row per user, day and source.
    static let ddl = """
        CREATE TABLE health_metrics (
            id BIGSERIAL PRIMARY KEY, user_id UUID NOT NULL, recorded_at DATE NOT NULL, source TEXT NOT NULL,
            steps INTEGER, distance_meters DOUBLE PRECISION, heart_rate_avg DOUBLE PRECISION, heart_rate_min INTEGER,
            heart_rate_max INTEGER, heart_rate_resting INTEGER, heart_rate_variability DOUBLE PRECISION,
            blood_oxygen_percent DOUBLE PRECISION, respiratory_rate DOUBLE PRECISION, weight_kg DOUBLE PRECISION,
            body_fat_percent DOUBLE PRECISION, bmi DOUBLE PRECISION, sleep_hours DOUBLE PRECISION, sleep_deep_hours DOUBLE PRECISION,
            sleep_rem_hours DOUBLE PRECISION, sleep_light_hours DOUBLE PRECISION, sleep_awake_minutes INTEGER, water_ml INTEGER,
            caffeine_mg INTEGER, mindful_minutes INTEGER, timezone TEXT, raw_data JSONB, created_at TIMESTAMPTZ DEFAULT now(),
            UNIQUE (user_id, recorded_at, source))
        """

    /// Loads the CSV fixture's rows into the table with parameterized INSERTs.
    static func load(_ connection: PostgresConnection) throws {
        try connection.query(ddl)
        let reader = try CSVReader(url: Fixtures.url("health-metrics/dump.csv"))
        guard let header = try reader.next() else { return }
        let columns = Array(header.fields.dropFirst())  // id is generated
        let placeholders = columns.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        while let row = try reader.next() {
            try connection.query(
                "INSERT INTO health_metrics (\(columns.joined(separator: ", "))) VALUES (\(placeholders))",
                row.fields.dropFirst().map { $0.isEmpty ? nil : $0 })
        }
    }

    @Test func copyStreamsTheSameDaysAsTheCSVDump() throws {
        let cluster = try ScratchCluster()
        defer { cluster.stop() }
        let connection = try PostgresConnection(url: cluster.url())
        try Self.load(connection)
        let (fromTable, tableTally) = try HealthMetricsMapperTests.map {
            try HealthMetricsTable.forEachDay(url: cluster.url(), table: "health_metrics", $0)
        }
        let (fromCSV, csvTally) = try HealthMetricsMapperTests.map { try HealthMetricsCSV.forEachDay(url: Fixtures.url("health-metrics/dump.csv"), $0) }
        func key(_ r: SourceRecord) -> String { [r.participant, r.kind, r.start, r.end ?? "", String(Double(r.value ?? "") ?? -1), r.source ?? ""].joined(separator: "|") }
        #expect(fromTable.map(key).sorted() == fromCSV.map(key).sorted())
        #expect(tableTally.perItem == csvTally.perItem && tableTally.unmappedRows == 2 && tableTally.seen == 4)
        #expect(fromTable.allSatisfy { $0.file == "table health_metrics" })
    }

    @Test func errorsCarrySQLStateNeverValues() throws {
        let cluster = try ScratchCluster()
        defer { cluster.stop() }
        let connection = try PostgresConnection(url: cluster.url())
        try connection.query(Self.ddl)
        do {
            try connection.query("INSERT INTO health_metrics (user_id, recorded_at, source) VALUES ($1, $2, $3)", ["not-a-uuid-P0007", "2026-09-10", "x"])
            Issue.record("a bad uuid was accepted")
        } catch let error as CohortError {
            #expect(error.description.contains("SQLSTATE 22P02"))
            #expect(!error.description.contains("P0007"))
        }
        #expect(throws: CohortError.self) { try HealthMetricsTable.forEachDay(url: cluster.url(), table: "no_such_table") { _ in } }
        #expect(throws: CohortError.self) { try PostgresConnection(url: cluster.url(database: "no_such_db")) }
    }
}
