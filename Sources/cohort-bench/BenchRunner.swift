import CohortCore
import CohortKit
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One size's run: set-up (not measured), then each phase in its own process, then the
/// reference commands over the same files, in the same run.
struct BenchRunner: Sendable {
    var size: String
    var participants: Int
    /// Minutes past each hour with a heart-rate sample (`BenchSize.heartRateMinutes`).
    var heartRateMinutes: [Int] = [0]
    var seed: UInt64
    var bench: BenchWorkspace
    var compression: ExportCompression
    var projectRoot: URL
    /// `sqlite`, or `postgres` with the run's fresh database in `databaseURL`.
    var store = "sqlite"
    var databaseURL: String?
    /// `--threads`: the export phases' record threads (nil: every core).
    var threads: Int?
    /// The cores this run is confined to (the bench's affinity mask, which every process it
    /// starts inherits); DuckDB gets that many threads unless `threads` says otherwise.
    var cores = 1
    /// `--quiet`: the phase processes draw no progress line either.
    var quiet = false
    var log: @Sendable (String) -> Void

    func run() throws -> SizeReport {
        log("\(size) on \(store): writing a synthetic cohort of \(participants) participants and enrolling them (not timed) …")
        let written = try bench.create(
            participants: participants, seed: seed, projectRoot: projectRoot, databaseURL: databaseURL, heartRateMinutes: heartRateMinutes)
        var phases: [PhaseResult] = []
        for phase in BenchPhase.allCases {
            log("\(size): \(phase.title) …")
            phases.append(try runPhaseProcess(phase, expectedRecords: written))
        }
        let archive = try bench.archive()
        let payload = bench.root.appendingPathComponent("payload.tar")
        log("\(size): references: gzip -\(compression.level) over the payload, gzip -dc | sha256sum over the archive …")
        _ = try Self.timeShell("gzip -dc \"$1\" > \"$2\"", archive.path, payload.path)
        let payloadBytes = BenchPhase.size(payload)
        let gzipSeconds = try Self.timeShell("gzip -\(compression.level) -c \"$1\" > /dev/null", payload.path)
        try? FileManager.default.removeItem(at: payload)
        let digestSeconds = try Self.timeShell("gzip -dc \"$1\" | sha256sum > /dev/null", archive.path)
        let references = [
            ReferenceResult(name: "gzip_compress", command: "gzip -\(compression.level) -c payload.tar > /dev/null", seconds: gzipSeconds, inputBytes: payloadBytes),
            ReferenceResult(name: "gzip_inflate_sha256", command: "gzip -dc ARCHIVE | sha256sum", seconds: digestSeconds, inputBytes: BenchPhase.size(archive)),
        ]
        log("\(size): reference: the DuckDB pipeline on the same input files …")
        let duckdb = try DuckDBReference.run(bench: bench, compressionLevel: compression.level, threads: threads ?? cores)
        return SizeReport(
            size: size, store: store, participants: participants, recordsGenerated: written, compression: compression.rawValue, cores: cores, phases: phases,
            references: references, duckdb: duckdb)
    }

    /// Runs `phase` in a child process of this executable and reads its result line.
    /// Its stderr is this one's: on a terminal it draws the phase's progress line there.
    private func runPhaseProcess(_ phase: BenchPhase, expectedRecords: Int) throws -> PhaseResult {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments =
            ["phase", phase.rawValue, "--dir", bench.root.path, "--compression", compression.rawValue, "--expected-records", String(expectedRecords)]
            + (quiet ? ["--quiet"] : []) + (threads.map { ["--threads", String($0)] } ?? [])
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
            let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last,
            let result = try? JSONDecoder().decode(PhaseResult.self, from: Data(line.utf8))
        else {
            throw CohortError(.system, "the \(phase.rawValue) phase failed (exit \(process.terminationStatus))",
                hint: "its error is printed above; rerun with --keep and inspect \(bench.root.path)")
        }
        return result
    }

    /// This executable (re-run for each phase).
    static var executable: URL {
        let proc = URL(fileURLWithPath: "/proc/self/exe")
        if FileManager.default.fileExists(atPath: proc.path) { return proc.resolvingSymlinksInPath() }
        return URL(fileURLWithPath: CommandLine.arguments[0])
    }

    /// Wall time of `sh -c script sh args…`; throws when it exits non-zero.
    static func timeShell(_ script: String, _ args: String...) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "set -e; " + script, "sh"] + args
        process.standardOutput = FileHandle.nullDevice
        let clock = ContinuousClock()
        let start = clock.now
        try process.run()
        process.waitUntilExit()
        let seconds = (clock.now - start) / .seconds(1)
        guard process.terminationStatus == 0 else {
            throw CohortError(.system, "a reference command failed: \(script)", hint: "the benchmark needs gzip and sha256sum on PATH")
        }
        return seconds
    }
}
