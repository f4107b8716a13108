import CohortCore
import CohortKit
import Foundation

/// What the import benches (`applehealth`, `fhir`, `health-metrics`) share: a working folder they
/// may wipe, and the import timed in a child process of its own, so its peak RSS is the import's.
enum ImportBenchChild {
    /// Makes `base` empty, refusing a folder that a previous run of bench `name` did not make.
    static func freshFolder(_ base: URL, bench name: String) throws {
        let fm = FileManager.default
        let marker = base.appendingPathComponent(".cohort-bench-\(name)")
        if fm.fileExists(atPath: base.path) {
            guard fm.fileExists(atPath: marker.path) else {
                throw CohortError(.conflict, "the folder exists and is not a previous \(name) bench", at: .init(file: base.path), hint: "choose another --dir")
            }
            try fm.removeItem(at: base)
        }
        try fm.createDirectory(at: base, withIntermediateDirectories: true)
        _ = fm.createFile(atPath: marker.path, contents: Data())
    }

    /// Runs `cohort-bench ARGUMENTS` (an `--import-only` run) and returns the figures it prints as
    /// one JSON object; `seconds` is always there.
    /// A workspace at `folder` on the demo protocol with participants 1…`count` (the FHIR bench's
    /// codes) enrolled and consented, ready for an import bench.
    static func consentedWorkspace(at folder: URL, participants count: Int) throws {
        let root = try ExampleFiles.temporaryCopy()
        defer { try? FileManager.default.removeItem(at: root) }
        let workspace = try Workspace.create(
            at: folder, protocolURL: root.appendingPathComponent(DemoRun.protocolPath), actor: "bench", now: { CohortBench.AppleHealth.now })
        let entries = (1...count).map { i in
            (RosterEntry(code: FHIRBulkGenerator.code(i), name: "Bench Person \(i)", birthDate: "1980-02-29", sex: i % 2 == 0 ? "female" : "male",
                timeZone: "Europe/Berlin", enrolledOn: CohortBench.AppleHealth.enrolled), line: Int?.none)
        }
        _ = try Roster(workspace: workspace).enroll(entries, file: nil, source: "bench")
        let consent = ConsentService(workspace: workspace)
        for i in 1...count {
            _ = try consent.record(
                code: FHIRBulkGenerator.code(i), version: "1.0", signedAt: Timestamp(epochMilliseconds: 1_767_225_600_000), signature: "typed:Bench",
                sharing: SharingScope.broad)
        }
    }

    static func run(_ arguments: [String]) throws -> (result: [String: Double], seconds: Double) {
        let process = Process()
        process.executableURL = BenchRunner.executable
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
            let result = try JSONSerialization.jsonObject(with: output) as? [String: Double], let seconds = result["seconds"]
        else { throw CohortError(.system, "the import process failed (exit \(process.terminationStatus))") }
        return (result, seconds)
    }
}
