import CohortCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The DuckDB pipeline issue 28 states the CSV + JSON export against: scripts/duckdb-export-reference.py
/// on the size's own input files (pseudonyms, date shift, roster and pattern scrubbing of notes,
/// CSV + NDJSON, tar.gz, signed digest manifest), run by `.venv/bin/python` with the `duckdb`
/// package (scripts/setup-venv.sh). `COHORT_BENCH_PYTHON` names another Python. Without either,
/// the bench measures nothing and says why (``skipped``).
struct DuckDBReference: Codable, Sendable {
    var seconds: Double
    var peakRSSBytes: Int
    /// CPU time of the pipeline's process and the commands it ran, user and system (nil from a
    /// script that did not report it).
    var cpuSeconds: Double?
    var records: Int
    var payloadBytes: Int
    var archiveBytes: Int
    var version: String
    /// DuckDB's threads (`--threads`; nil: every core).
    var threads: Int?

    enum CodingKeys: String, CodingKey {
        case seconds, records, threads
        case peakRSSBytes = "peak_rss_bytes"
        case cpuSeconds = "cpu_seconds"
        case payloadBytes = "payload_bytes"
        case archiveBytes = "archive_bytes"
        case version = "duckdb"
    }

    /// The measured reference, or why it was not measured.
    enum Outcome: Sendable {
        case measured(DuckDBReference)
        case skipped(String)
    }

    static let script = "scripts/duckdb-export-reference.py"

    /// Runs the pipeline on `bench`'s input files into `bench.root/duckdb` (removed afterwards).
    static func run(bench: BenchWorkspace, compressionLevel: Int, threads: Int?) throws -> Outcome {
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        guard let root = CohortBench.Scrub.sourceRoot(from: [cwd, BenchRunner.executable.deletingLastPathComponent()]) else {
            return .skipped("run cohort-bench from the cohort source folder (it runs \(script))")
        }
        let python = ProcessInfo.processInfo.environment["COHORT_BENCH_PYTHON"].map { URL(fileURLWithPath: $0) }
            ?? root.appendingPathComponent(".venv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            return .skipped("no \(python.path) (run scripts/setup-venv.sh)")
        }
        let out = bench.root.appendingPathComponent("duckdb", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: out) }
        let process = Process()
        process.executableURL = python
        process.arguments =
            [root.appendingPathComponent(script).path, bench.importDirectory.path, out.path, "--compression", String(compressionLevel)]
            + (threads.map { ["--threads", String($0)] } ?? [])
        // Its stderr is the bench's: a failure's traceback is printed above the bench's error.
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        if process.terminationStatus == 3 { return .skipped("the duckdb package is not in \(python.path) (run scripts/setup-venv.sh)") }
        guard process.terminationStatus == 0, let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last,
            var reference = try? JSONDecoder().decode(DuckDBReference.self, from: Data(line.utf8))
        else {
            throw CohortError(.system, "the DuckDB reference failed (exit \(process.terminationStatus))",
                hint: "its error is printed above; rerun with --keep and run \(script) \(bench.importDirectory.path) /tmp/duckdb-out")
        }
        reference.threads = threads
        return .measured(reference)
    }
}
