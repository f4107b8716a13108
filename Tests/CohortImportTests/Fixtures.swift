import CohortCore
import Foundation
import Testing

/// Paths of the hand-written fixtures, and the settings of the study they were written for
/// (axspa-wearables: MRNs in http://hospital.example.org/mrn, a local flare code).
enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let repoRoot = root.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static func url(_ path: String) -> URL { root.appendingPathComponent(path) }

    static let mrnSystem = "http://hospital.example.org/mrn"
    static let settings = ImportSettings(
        patientIdentifierSystem: mrnSystem,
        codeMap: [.init(system: "http://hospital.example.org/fhir/CodeSystem/rheumatology-events", code: "axspa-flare", kind: .flare)])
    /// The kinds axspa-wearables collects.
    static let collected: Set<RecordKind> = [
        .pain, .morningStiffness, .fatigue, .basdai, .heartRate, .restingHeartRate, .hrvSDNN, .steps, .sleepDuration, .medicationDose, .flare,
        .barometricPressure, .ambientTemperature, .relativeHumidity,
    ]

    /// The `.venv` interpreter scripts/setup-venv.sh makes.
    static let python = repoRoot.appendingPathComponent(".venv/bin/python").path
    /// Interop checks run in CI (where a missing .venv fails them) and wherever .venv exists.
    static var hasPython: Bool { ProcessInfo.processInfo.environment["CI"] != nil || FileManager.default.isExecutableFile(atPath: python) }
    /// PostgreSQL tests run in CI (where a cluster that cannot start fails them) and wherever
    /// Debian's server programs are installed.
    static var hasPostgres: Bool { ProcessInfo.processInfo.environment["CI"] != nil || ScratchClusterProbe.reason == nil }

    /// Runs a program; returns its status and output.
    static func run(_ program: String, _ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
