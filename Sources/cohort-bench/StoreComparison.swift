import CohortCompliance
import Foundation

/// One size measured on both stores: per phase, PostgreSQL's records/s and peak resident memory
/// divided by SQLite's (records/s > 1: PostgreSQL is faster; memory > 1: it uses more).
struct StoreComparison: Encodable, Sendable {
    struct Phase: Encodable, Sendable {
        var phase: String
        var sqliteRecordsPerSecond: Double
        var postgresRecordsPerSecond: Double
        var recordsPerSecondRatio: Double
        var peakMemoryRatio: Double

        enum CodingKeys: String, CodingKey {
            case phase
            case sqliteRecordsPerSecond = "sqlite_records_per_second"
            case postgresRecordsPerSecond = "postgres_records_per_second"
            case recordsPerSecondRatio = "records_per_second_ratio"
            case peakMemoryRatio = "peak_memory_ratio"
        }
    }

    var size: String
    var phases: [Phase]

    /// The comparison of `reports` when they hold one SQLite and one PostgreSQL run of a size.
    init?(_ reports: [SizeReport]) {
        guard let sqlite = reports.first(where: { $0.store == "sqlite" }), let postgres = reports.first(where: { $0.store == "postgres" }) else { return nil }
        size = sqlite.size
        phases = BenchPhase.allCases.compactMap { phase in
            guard let a = sqlite.phase(phase), let b = postgres.phase(phase), a.seconds > 0, b.seconds > 0 else { return nil }
            // verify phases count the export's records, as the size table does.
            let recordsA = phase == .import || phase == .export || phase == .exportTables ? a.records : (sqlite.phase(.export)?.records ?? 0)
            let recordsB = phase == .import || phase == .export || phase == .exportTables ? b.records : (postgres.phase(.export)?.records ?? 0)
            let rateA = Double(recordsA) / a.seconds, rateB = Double(recordsB) / b.seconds
            return Phase(
                phase: phase.rawValue, sqliteRecordsPerSecond: rateA, postgresRecordsPerSecond: rateB, recordsPerSecondRatio: rateA > 0 ? rateB / rateA : 0,
                peakMemoryRatio: a.peakRSSBytes > 0 ? Double(b.peakRSSBytes) / Double(a.peakRSSBytes) : 0)
        }
    }

    /// The table printed after a size's two runs.
    func render() -> String {
        var table = TextTable(
            header: ["phase", "SQLite records/s", "PostgreSQL records/s", "PostgreSQL ÷ SQLite", "peak memory PostgreSQL ÷ SQLite"],
            alignments: [.left, .right, .right, .right, .right])
        for p in phases {
            table.append([
                p.phase, SizeReport.grouped(Int(p.sqliteRecordsPerSecond)), SizeReport.grouped(Int(p.postgresRecordsPerSecond)),
                String(format: "%.2f", p.recordsPerSecondRatio), String(format: "%.2f", p.peakMemoryRatio),
            ])
        }
        return "size \(size): PostgreSQL ÷ SQLite\n\n" + table.render()
    }
}
