import ArgumentParser
import CohortCore
import CohortIO
import CohortKit
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `cohort-bench`: import → export → verify on a deterministic synthetic cohort, with the
/// reference commands timed in the same run.
@main
struct CohortBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cohort-bench",
        abstract: "Benchmark import, export and verify on a synthetic cohort, against gzip references timed in the same run.",
        discussion: """
            For each size, writes a deterministic synthetic cohort (90 days per participant of symptom logs, \
            hourly heart rate, resting heart rate, HRV, steps, sleep, medication doses, weather and \
            free-text notes with planted identifiers) as CSV and NDJSON files, enrolls the roster and \
            records consent (not timed), then measures, each in its own process:
              import         the files through `cohort data import`'s code path
              export-tables  CSV and JSON only into the signed archive (--outputs csv,json)
              export         CSV, JSON and FHIR R4, with the residual-PII scan
              verify         signature, digests, gzip/tar, bag manifests, rows (no scan)
              verify-scan    the same plus the residual-PII scan against the roster
            and the references on the same files: `gzip -N` compressing the uncompressed bag payload \
            (the compression-bound floor of an export) and `gzip -dc ARCHIVE | sha256sum` (the floor of \
            verify). Then the DuckDB pipeline of issue 28 on the same input files \
            (scripts/duckdb-export-reference.py with .venv's duckdb, or $COHORT_BENCH_PYTHON: pseudonyms, \
            date shift, roster and pattern scrubbing of notes, CSV + NDJSON, tar.gz, signed digest manifest), \
            printed as "export CSV + JSON ÷ DuckDB pipeline" with both peak RSS, or "DuckDB reference \
            skipped: …" when .venv or duckdb is missing (scripts/setup-venv.sh installs it); with --threads, \
            DuckDB gets the same threads. --threads N is also the import's: rows are validated on N \
            threads besides the reader (1: on the reading thread; default: the cores less two, at least 1) and written in file \
            order by the one database writer; the import's line says which. --cores 1,all runs each size on one \
            core and then on all (every process the bench starts is confined to the first N CPUs it may use, \
            and the thread defaults — records, validators, deflate, scan, DuckDB — follow) and prints \
            each phase's speed-up and its fraction of linear. Prints records/s, MB/s, peak resident memory and sizes, the ratios, \
            and the targets. Build in release mode: debug figures are meaningless.

            Sizes: S ≈ 100k records (37 participants), M ≈ 1M (372), L ≈ 5M (1,860), XL ≈ 10M (3,720), \
            XL-dense ≈ 8.5M from M's 372 participants (a heart-rate sample every 5 minutes): against M it \
            shows how memory grows with records alone.

            --store postgres runs the same phases with the study on PostgreSQL (a throwaway cluster the \
            bench starts and stops, or the server of --database, where it creates and drops one database \
            per run); --store both runs SQLite then PostgreSQL for each size and prints the \
            PostgreSQL ÷ SQLite ratio of each phase's records/s and peak memory.

            Examples:
              swift run -c release cohort-bench                 # size S
              swift run -c release cohort-bench --size M
              swift run -c release cohort-bench --size M,L --json > bench.json
              swift run -c release cohort-bench --size S --keep --dir /tmp/bench
              swift run -c release cohort-bench --size M --threads 1  # one thread
              swift run -c release cohort-bench --size M --cores 1,all
              swift run -c release cohort-bench --size M --store both
              swift run -c release cohort-bench --size M,XL --store postgres
              swift run -c release cohort-bench --size M,XL-dense --store postgres

            `cohort-bench scrub` measures the free-text scrubber on the adversarial corpus instead (see its --help).

            On a terminal, stderr shows what is being done and a progress line per phase (records, \
            participants or archive bytes, the rate, and the ETA where the total is known); --quiet \
            silences both, and nothing is drawn when stderr is not a terminal.

            Exit codes: 0 measured (targets are reported, not enforced), 1 a phase failed, 64 bad usage.
            """,
        subcommands: [Run.self, Scrub.self, AppleHealth.self, FHIR.self, HealthMetrics.self, Delivery.self, PhaseCommand.self],
        defaultSubcommand: Run.self)

    struct Run: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "run", abstract: "Run the benchmark (the default).")

        @Option(help: "Sizes to run, comma-separated: S, M, L, XL, XL-dense.") var size: String = "S"
        @Option(help: "The study store: sqlite, postgres, or both (the ratio between them).") var store: BenchStore = .sqlite
        @Option(help: "A PostgreSQL server URL where the bench may create its databases (default: a throwaway cluster it starts).")
        var database: String?
        @Option(help: "Participants (overrides the size's count; the size is then named 'custom').") var participants: Int?
        @Option(help: "Seed for the synthetic cohort.") var seed: UInt64 = 42
        @Option(help: "Working folder (a previous benchmark there is replaced).") var dir: String = "cohort-bench-data"
        @Option(help: "Export compression: fast, default or best (zlib 1, 6, 9); the gzip reference uses the same level.")
        var compression: ExportCompression = .default
        @Option(help: "Threads that validate rows (import; default: cores less 2, at least 1) and read and de-identify records (export; default: every core).")
        var threads: Int?
        @Option(
            help: ArgumentHelp(
                "Cores to run on, of those the bench may use: a count or a comma-separated list such as 1,2,all.",
                discussion: "Every process the bench starts runs on the first N of its CPUs, and the thread defaults follow. With several counts each size runs once per count and a table gives each phase's speed-up over the fewest and its fraction of linear (goal ≥ 0.7)."))
        var cores: String = "all"
        @Flag(help: "Keep the generated workspace, files and archive (and, with --database, the databases made on that server).") var keep = false
        @Flag(help: "Print JSON instead of tables.") var json = false
        @Flag(name: [.customShort("q"), .long], help: "No progress and no notes on stderr (errors and results stay).") var quiet = false

        func validate() throws {
            for name in sizeNames where BenchSize(rawValue: name) == nil {
                throw ValidationError("unknown size '\(name)': expected S, M, L or XL")
            }
            if database != nil, store == .sqlite { throw ValidationError("--database needs --store postgres or both") }
            if let threads, !(1...256).contains(threads) { throw ValidationError("--threads must be between 1 and 256") }
            _ = try coreCounts()
            if let participants, !(1...20_000).contains(participants) {
                throw ValidationError("--participants must be between 1 and 20000")
            }
        }

        var sizeNames: [String] { size.uppercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }

        /// `--cores` as counts, ascending, each between 1 and the cores the bench may use.
        func coreCounts() throws -> [Int] {
            let available = Cores.available
            var counts: Set<Int> = []
            for item in cores.lowercased().split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                guard let count = item == "all" ? available : Int(item), (1...available).contains(count) else {
                    throw ValidationError("--cores takes counts between 1 and \(available) (the cores this process may use) or 'all', comma-separated")
                }
                counts.insert(count)
            }
            guard !counts.isEmpty else { throw ValidationError("--cores takes counts between 1 and \(available) or 'all', comma-separated") }
            if counts != [available], Cores.allowedCPUs().count < counts.max()! {
                throw ValidationError("--cores: this system does not say which CPUs the bench may use, so it can run on all of them only")
            }
            return counts.sorted()
        }

        func run() throws {
            let counts = try coreCounts()
            // The protocol and templates are compiled in: the bench runs the same from any folder.
            let root = try ExampleFiles.temporaryCopy()
            defer { try? FileManager.default.removeItem(at: root) }
            let base = URL(fileURLWithPath: dir, isDirectory: true)
            let showing = isatty(2) == 1 && !quiet
            let log: @Sendable (String) -> Void = { line in
                if showing { FileHandle.standardError.write(Data(("· " + line + "\n").utf8)) }
            }
            var reports: [SizeReport] = []
            var scalings: [CoreScaling] = []
            let runs: [(String, Int, [Int])] = participants.map { [("custom", $0, [0])] } ?? sizeNames.compactMap { name in
                BenchSize(rawValue: name).map { (name, $0.participants, $0.heartRateMinutes) }
            }
            let server = store == .sqlite ? nil : try BenchPostgresServer(databaseURL: database)
            server?.keepsDatabases = keep && database != nil
            defer { server?.stop() }
            // Confined by affinity: every process the bench starts from then on inherits it.
            let allowed = Cores.allowedCPUs()
            for (name, count, minutes) in runs {
                var sized: [SizeReport] = []
                for cores in counts {
                    if cores < allowed.count { try Cores.restrict(to: Array(allowed.prefix(cores))) }
                    defer { if cores < allowed.count { try? Cores.restrict(to: allowed) } }
                    let size = SizeRun(name: name, participants: count, heartRateMinutes: minutes, cores: cores)
                    sized += try measure(size, root: root, base: base, server: server, log: log)
                }
                reports += sized
                for kind in store.stores {
                    guard let scaling = CoreScaling(sized.filter { $0.store == kind }) else { continue }
                    scalings.append(scaling)
                    if !json { print(scaling.render()) }
                }
            }
            if !keep, (try? FileManager.default.contentsOfDirectory(atPath: base.path))?.isEmpty == true {
                try? FileManager.default.removeItem(at: base)
            }
            let flatness = Self.flatness(reports)
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                let comparisons = Dictionary(
                    runs.compactMap { run in StoreComparison(reports.filter { $0.size == run.0 }).map { (run.0, $0) } }, uniquingKeysWith: { a, _ in a })
                let document = BenchDocument(
                    tool: "cohort-bench \(CohortVersion.string)", cores: Cores.available, coreCounts: counts,
                    exportThreads: threads ?? counts[counts.count - 1], sizes: reports, coreScaling: scalings.isEmpty ? nil : scalings, memoryGrowthLOverM: flatness,
                    postgresOverSQLite: comparisons.isEmpty ? nil : comparisons, exportMemoryXLOverM: Self.exportGrowth(reports, size: "XL")?.memory,
                    exportMemoryXLDenseOverM: Self.exportGrowth(reports, size: "XL-DENSE")?.memory)
                print(String(decoding: try encoder.encode(document), as: UTF8.self))
            } else {
                if let flatness {
                    print(String(format: "memory: L peak / M peak = %.2f (goal ≤ 1.10: %@)", flatness, flatness <= 1.10 ? "met" : "NOT met"))
                }
                for size in ["XL", "XL-DENSE"] {
                    guard let growth = Self.exportGrowth(reports, size: size) else { continue }
                    print(
                        String(
                            format: "export memory on PostgreSQL: %@ peak / M peak = %.2f (%.1f× the records, %.1f× the participants; goal ≤ 1.10: %@)",
                            size, growth.memory, growth.records, growth.participants, growth.memory <= 1.10 ? "met" : "NOT met"))
                }
            }
            if reports.contains(where: { $0.phases.contains { !$0.passed } }) { throw ExitCode(1) }
        }

        /// One size on one core count.
        struct SizeRun {
            var name: String
            var participants: Int
            var heartRateMinutes: [Int]
            var cores: Int
        }

        /// Runs `size` on each store of `--store` (on the cores the process is confined to) and
        /// prints each report, and the PostgreSQL ÷ SQLite table when both ran.
        func measure(_ size: SizeRun, root: URL, base: URL, server: BenchPostgresServer?, log: @escaping @Sendable (String) -> Void) throws -> [SizeReport] {
            var pair: [SizeReport] = []
            for kind in store.stores {
                // SQLite alone keeps the folder layout of earlier runs.
                let folder = store == .sqlite ? size.name : "\(size.name)-\(kind)"
                let bench = BenchWorkspace(root: base.appendingPathComponent(folder, isDirectory: true))
                var runner = BenchRunner(
                    size: size.name, participants: size.participants, seed: seed, bench: bench, compression: compression, projectRoot: root, quiet: quiet, log: log)
                runner.store = kind
                runner.threads = threads
                runner.cores = size.cores
                runner.heartRateMinutes = size.heartRateMinutes
                if kind == "postgres", let server { runner.databaseURL = try server.freshDatabase(label: size.name) }
                let report = try runner.run()
                if !keep { try? FileManager.default.removeItem(at: bench.root) }
                pair.append(report)
                if !json { print(report.render()) }
            }
            if !json, let comparison = StoreComparison(pair) { print(comparison.render()) }
            return pair
        }

        /// L's peak resident memory over M's, when both ran (on the same store).
        static func flatness(_ reports: [SizeReport]) -> Double? {
            for store in ["sqlite", "postgres"] {
                let mine = reports.filter { $0.store == store }
                if let m = mine.first(where: { $0.size == "M" }), let l = mine.first(where: { $0.size == "L" }), m.peakMemory > 0 {
                    return Double(l.peakMemory) / Double(m.peakMemory)
                }
            }
            return nil
        }

        /// On PostgreSQL, `size` over M, when both ran: the export phase's peak resident memory,
        /// and the records and participants generated.
        static func exportGrowth(_ reports: [SizeReport], size: String) -> (memory: Double, records: Double, participants: Double)? {
            let postgres = reports.filter { $0.store == "postgres" }
            guard let m = postgres.first(where: { $0.size == "M" }), let other = postgres.first(where: { $0.size == size }),
                let mExport = m.phase(.export), let otherExport = other.phase(.export),
                mExport.peakRSSBytes > 0, m.recordsGenerated > 0, m.participants > 0
            else { return nil }
            return (
                Double(otherExport.peakRSSBytes) / Double(mExport.peakRSSBytes), Double(other.recordsGenerated) / Double(m.recordsGenerated),
                Double(other.participants) / Double(m.participants)
            )
        }
    }

    /// Runs one phase in this process and prints its result as a JSON line (used by `run`).
    struct PhaseCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "phase", abstract: "Run one measured phase in this process (used by `run`).", shouldDisplay: false)

        @Argument(help: "import, export-tables, export, verify or verify-scan") var phase: String
        @Option(help: "The size's folder.") var dir: String
        @Option(help: "Export compression.") var compression: ExportCompression = .default
        @Option(help: "Records the import phase expects (the total of its progress line).") var expectedRecords: Int?
        @Option(help: "Threads that validate rows (import; default: cores less 2, at least 1) or read and de-identify records (export; default: every core).") var threads: Int?
        @Flag(name: [.customShort("q"), .long], help: "No progress line.") var quiet = false

        func run() throws {
            guard let phase = BenchPhase(rawValue: phase) else { throw ValidationError("unknown phase '\(phase)'") }
            // As the `cohort` executable does at start: the phases measure what the CLI runs.
            ProcessMemory.returnLargeBlocksWhenFreed()
            do {
                let result = try phase.run(
                    in: BenchWorkspace(root: URL(fileURLWithPath: dir, isDirectory: true)), compressionLevel: compression.level,
                    expectedRecords: expectedRecords, threads: threads, showingProgress: isatty(2) == 1 && !quiet)
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                print(String(decoding: try encoder.encode(result), as: UTF8.self))
            } catch let error as CohortError {
                FileHandle.standardError.write(Data("error: \(error.message)\(error.hint.map { " — " + $0 } ?? "")\n".utf8))
                throw ExitCode(1)
            }
        }
    }
}

/// `--json` output.
struct BenchDocument: Encodable, Sendable {
    var tool: String
    /// The cores the bench may use (its affinity mask and CPU quota).
    var cores: Int
    /// `--cores`: the counts each size ran on.
    var coreCounts: [Int]
    /// The export phases' record threads (`--threads`, default the cores of the last count).
    var exportThreads: Int
    var sizes: [SizeReport]
    /// Per size and store run on two or more core counts: each phase's speed-up.
    var coreScaling: [CoreScaling]?
    var memoryGrowthLOverM: Double?
    /// Per size run on both stores: PostgreSQL ÷ SQLite.
    var postgresOverSQLite: [String: StoreComparison]?
    /// On PostgreSQL: the export's peak memory at XL over M.
    var exportMemoryXLOverM: Double?
    /// On PostgreSQL: the export's peak memory at XL-dense (M's participants, ~10M records) over M.
    var exportMemoryXLDenseOverM: Double?

    enum CodingKeys: String, CodingKey {
        case tool, cores, sizes
        case coreCounts = "core_counts"
        case coreScaling = "core_scaling"
        case exportThreads = "export_threads"
        case memoryGrowthLOverM = "memory_growth_l_over_m"
        case postgresOverSQLite = "postgres_over_sqlite"
        case exportMemoryXLOverM = "export_memory_xl_over_m"
        case exportMemoryXLDenseOverM = "export_memory_xl_dense_over_m"
    }
}
