import Foundation

/// A fresh temporary directory, removed when `body` returns.
func withTemporaryDirectory<R>(_ body: (URL) throws -> R) throws -> R {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-io-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory)
}
