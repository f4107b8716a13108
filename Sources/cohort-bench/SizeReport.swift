import CohortCompliance
import Foundation

/// Everything measured for one size, the ratios against the references, and the targets.
struct SizeReport: Encodable, Sendable {
    var size: String
    /// `sqlite` or `postgres`.
    var store: String
    var participants: Int
    var recordsGenerated: Int
    var compression: String
    /// The cores the run was confined to (`--cores`; all the bench may use by default).
    var cores: Int
    var phases: [PhaseResult]
    var references: [ReferenceResult]
    /// The DuckDB pipeline on the same input files (scripts/duckdb-export-reference.py), or why it
    /// was not run; nil when the bench did not try (the import-only paths).
    var duckdb: DuckDBReference.Outcome?

    enum CodingKeys: String, CodingKey {
        case size, store, participants, compression, cores, phases, references, ratios, targets, duckdb
        case recordsGenerated = "records_generated"
        case duckdbSkipped = "duckdb_skipped"
    }

    /// Issue 28's targets on a 2-core machine (the goal column is printed from these).
    static let exportRatioTarget = 1.5
    static let verifyRatioTarget = 1.5
    static let importRateTarget = 400_000.0
    static let peakMemoryTarget = 64 * 1024 * 1024
    /// Issue 28: the CSV + JSON export in at most 0.6 × the DuckDB pipeline's time.
    static let duckDBRatioTarget = 0.6

    func phase(_ phase: BenchPhase) -> PhaseResult? { phases.first { $0.phase == phase.rawValue } }
    func reference(_ name: String) -> ReferenceResult? { references.first { $0.name == name } }

    /// Export time / `gzip -N` time over the same payload.
    var exportRatio: Double? {
        guard let export = phase(.export), let gzip = reference("gzip_compress"), gzip.seconds > 0 else { return nil }
        return export.seconds / gzip.seconds
    }

    /// Verify time (no scan) / `gzip -dc | sha256sum` time over the same archive.
    var verifyRatio: Double? {
        guard let verify = phase(.verify), let digest = reference("gzip_inflate_sha256"), digest.seconds > 0 else { return nil }
        return verify.seconds / digest.seconds
    }

    /// The CSV + JSON export's time / the DuckDB pipeline's time, in the same run.
    var exportTablesOverDuckDB: Double? {
        guard let tables = phase(.exportTables), case .measured(let reference)? = duckdb, reference.seconds > 0 else { return nil }
        return tables.seconds / reference.seconds
    }

    var importRate: Double? {
        guard let p = phase(.import), p.seconds > 0 else { return nil }
        return Double(p.records) / p.seconds
    }

    var peakMemory: Int { phases.map(\.peakRSSBytes).max() ?? 0 }

    /// One line per target: name, measured, goal, met.
    var targets: [Target] {
        var targets: [Target] = []
        if let rate = importRate {
            targets.append(Target(name: "import records/s", measured: String(format: "%.0f", rate), goal: "≥ \(Int(Self.importRateTarget))", met: rate >= Self.importRateTarget))
        }
        if let ratio = exportRatio {
            targets.append(Target(name: "export / gzip reference", measured: String(format: "%.2f", ratio), goal: "≤ \(Self.exportRatioTarget)", met: ratio <= Self.exportRatioTarget))
        }
        if let ratio = exportTablesOverDuckDB {
            targets.append(
                Target(name: "export CSV + JSON / DuckDB pipeline", measured: String(format: "%.2f", ratio), goal: "≤ \(Self.duckDBRatioTarget)", met: ratio <= Self.duckDBRatioTarget))
        }
        if let ratio = verifyRatio {
            targets.append(Target(name: "verify / inflate+sha256 reference", measured: String(format: "%.2f", ratio), goal: "≤ \(Self.verifyRatioTarget)", met: ratio <= Self.verifyRatioTarget))
        }
        targets.append(
            Target(name: "peak resident memory", measured: Self.megabytes(peakMemory), goal: "≤ \(Self.megabytes(Self.peakMemoryTarget))", met: peakMemory <= Self.peakMemoryTarget))
        return targets
    }

    struct Target: Codable, Sendable {
        var name: String
        var measured: String
        var goal: String
        var met: Bool
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(size, forKey: .size)
        try container.encode(store, forKey: .store)
        try container.encode(participants, forKey: .participants)
        try container.encode(recordsGenerated, forKey: .recordsGenerated)
        try container.encode(compression, forKey: .compression)
        try container.encode(cores, forKey: .cores)
        try container.encode(phases, forKey: .phases)
        try container.encode(references, forKey: .references)
        try container.encode(
            [
                "export_over_gzip": exportRatio, "verify_over_inflate_sha256": verifyRatio, "import_records_per_second": importRate,
                "export_tables_over_duckdb": exportTablesOverDuckDB,
            ], forKey: .ratios)
        switch duckdb {
        case .measured(let reference)?: try container.encode(reference, forKey: .duckdb)
        case .skipped(let reason)?: try container.encode(reason, forKey: .duckdbSkipped)
        case nil: break
        }
        try container.encode(targets, forKey: .targets)
    }

    /// The human-readable table.
    func render() -> String {
        var text = "size \(size) on \(store == "postgres" ? "PostgreSQL" : "SQLite"): \(participants) participants × 90 days, \(Self.grouped(recordsGenerated)) records generated, compression \(compression), \(cores) core\(cores == 1 ? "" : "s")\n\n"
        var table = TextTable(
            header: ["phase", "records", "seconds", "CPU s", "records/s", "MB/s", "peak RSS", "output"],
            alignments: [.left, .right, .right, .right, .right, .right, .right, .left])
        for p in phases {
            guard let phase = BenchPhase(rawValue: p.phase) else { continue }
            let records = phase == .import || phase == .export || phase == .exportTables ? p.records : (self.phase(.export)?.records ?? 0)
            let rate = p.seconds > 0 ? Double(records) / p.seconds : 0
            let bytes = phase == .export || phase == .exportTables ? p.payloadBytes : p.inputBytes
            let output: String
            switch phase {
            case .import: output = "\(store == "postgres" ? "database" : "study.db") \(Self.megabytes(p.outputBytes)) from \(Self.megabytes(p.inputBytes)) of files"
                + (p.detail.isEmpty ? "" : "; \(p.detail)")
            case .exportTables, .export: output = "archive \(Self.megabytes(p.outputBytes)), payload \(Self.megabytes(p.payloadBytes)); \(p.detail)"
            case .verify, .verifyScan: output = (p.passed ? "" : "FAILED: ") + p.detail
            }
            table.append([
                phase.title, Self.grouped(records), String(format: "%.2f", p.seconds), Self.cpu(p.cpuSeconds), Self.grouped(Int(rate)),
                String(format: "%.1f", Double(bytes) / 1_048_576 / max(p.seconds, 1e-9)), Self.megabytes(p.peakRSSBytes), output,
            ])
        }
        for r in references {
            table.append([
                "reference: " + r.command, "", String(format: "%.2f", r.seconds), "", "", String(format: "%.1f", Double(r.inputBytes) / 1_048_576 / max(r.seconds, 1e-9)),
                "", Self.megabytes(r.inputBytes) + " in",
            ])
        }
        if case .measured(let d)? = duckdb {
            table.append([
                "reference: DuckDB pipeline", Self.grouped(d.records), String(format: "%.2f", d.seconds), Self.cpu(d.cpuSeconds), Self.grouped(Int(Double(d.records) / max(d.seconds, 1e-9))),
                String(format: "%.1f", Double(d.payloadBytes) / 1_048_576 / max(d.seconds, 1e-9)), Self.megabytes(d.peakRSSBytes),
                "archive \(Self.megabytes(d.archiveBytes)), payload \(Self.megabytes(d.payloadBytes)); duckdb \(d.version), "
                    + (d.threads.map { "\($0) thread\($0 == 1 ? "" : "s")" } ?? "every core"),
            ])
        }
        text += table.render() + "\n"
        switch duckdb {
        case .measured(let d)?:
            if let ratio = exportTablesOverDuckDB, let tables = phase(.exportTables) {
                text += String(
                    format: "export CSV + JSON ÷ DuckDB pipeline: %.2f (cohort %.2f s at %@ peak RSS%@, DuckDB %.2f s at %@%@)\n", ratio, tables.seconds,
                    Self.megabytes(tables.peakRSSBytes), busy(tables.cpuSeconds, tables.seconds), d.seconds, Self.megabytes(d.peakRSSBytes),
                    busy(d.cpuSeconds, d.seconds))
            }
        case .skipped(let reason)?: text += "DuckDB reference skipped: \(reason)\n"
        case nil: break
        }
        var goals = TextTable(header: ["target", "measured", "goal", "met"])
        for t in targets { goals.append([t.name, t.measured, t.goal, t.met ? "yes" : "NO"]) }
        return text + goals.render()
    }

    static func megabytes(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1_048_576) }

    /// CPU seconds for the table, empty when not measured.
    static func cpu(_ seconds: Double?) -> String { seconds.map { String(format: "%.2f", $0) } ?? "" }

    /// `CPU s ÷ (wall s × cores)`, as `, cores 93 % busy`; empty when the CPU time was not measured.
    func busy(_ cpu: Double?, _ seconds: Double) -> String {
        guard let cpu, seconds > 0, cores > 0 else { return "" }
        return String(format: ", cores %.0f %% busy", 100 * cpu / (seconds * Double(cores)))
    }

    static func grouped(_ n: Int) -> String {
        let digits = String(n)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return out
    }
}
