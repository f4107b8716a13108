import Foundation

/// A fresh temporary directory, removed when `body` returns.
func withTemporaryDirectory<R>(_ body: (URL) throws -> R) throws -> R {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-compression-\(UUID().uuidString)")
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

/// Incompressible test input: `count` bytes from the system's random generator.
enum RandomBytes {
    static func bytes(_ count: Int) throws -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }
}
