import Foundation
import Testing
import CohortCrypto

/// Bytes from a hex literal in a test vector (the vectors are fixed, so a typo fails loudly).
func hex(_ text: String) -> [UInt8] {
    let compact = text.filter { !$0.isWhitespace }
    guard let bytes = Hex.decode(compact) else {
        Issue.record("bad hex literal in test vector")
        return []
    }
    return bytes
}

/// A fresh temporary directory, removed when `body` returns.
func withTemporaryDirectory<R>(_ body: (URL) throws -> R) throws -> R {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-crypto-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory)
}

/// The outcome of running a stock command-line tool.
struct ToolResult {
    var status: Int32
    var output: [UInt8]
    var errorText: String
}

/// Runs `executable` with `arguments`, collecting stdout and stderr.
func runTool(_ executable: String, _ arguments: [String]) throws -> ToolResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let stdout = Pipe()
    let stderr = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
    // Read before waiting so a large output cannot fill the pipe and block the child.
    let output = stdout.fileHandleForReading.readDataToEndOfFile()
    let errorOutput = stderr.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ToolResult(
        status: process.terminationStatus, output: [UInt8](output),
        errorText: String(decoding: errorOutput, as: UTF8.self))
}

/// File permission bits of `url`.
func permissions(of url: URL) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
    return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
}
