import CohortCore
import CohortCrypto
import CohortStore
import Foundation
import Synchronization
import Testing

/// The package root, found from this file's location.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The `sqlite3` command-line tool the tamper tests edit the closed database with.
let sqlite3Path = "/usr/bin/sqlite3"
/// Whether the sqlite3-based tests run: when the tool is installed, and always under CI (which
/// installs it), so that there a missing tool fails them instead of skipping them.
let sqlite3Available: Bool = {
    let available = FileManager.default.isExecutableFile(atPath: sqlite3Path)
    if !available { print("skipping sqlite3-based tests: \(sqlite3Path) is not installed (apt-get install sqlite3)") }
    return available || ProcessInfo.processInfo.environment["CI"] != nil
}()

/// A study database in a fresh temporary directory, with its keys.
struct StoreFixture {
    let directory: URL
    let url: URL
    let piiKey: [UInt8]
    let signingKey: Ed25519PrivateKey

    func open(create: Bool = false, options: StoreOpenOptions = .init()) throws -> SQLiteStudyStore {
        try SQLiteStudyStore(url: url, piiKey: piiKey, create: create, options: options)
    }

    /// Runs `sql` on the database file with the stock `sqlite3` tool; returns its output.
    @discardableResult
    func sqlite(_ sql: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: sqlite3Path)
        process.arguments = [url.path, sql]
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CohortError(.system, "sqlite3 failed", underlying: String(decoding: errors, as: UTF8.self))
        }
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Runs `body` with a fixture whose database does not exist yet; removes the directory after.
func withStoreFixture<R>(_ body: (StoreFixture) throws -> R) throws -> R {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-store-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let fixture = StoreFixture(
        directory: directory, url: directory.appendingPathComponent(SQLiteStudyStore.fileName), piiKey: try SecureRandom.bytes(32),
        signingKey: try Ed25519PrivateKey.generate())
    return try body(fixture)
}

/// File permission bits of `path`.
func permissions(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return try #require((attributes[.posixPermissions] as? NSNumber)?.intValue)
}

let fixedDate = Date(timeIntervalSince1970: 1_741_941_000)

/// An enrollment with a recognisable identity (the values are searched for in the raw file).
func enrollment(code: String, identity: ParticipantIdentity) throws -> Enrollment {
    Enrollment(
        participant: Participant(
            id: UUID(), code: code, sex: .female, timeZone: "Europe/Berlin", enrolledOn: CivilDate(daysSinceEpoch: 20_150)),
        identity: identity, tokenSalt: try SecureRandom.bytes(16), tokenHash: try SecureRandom.bytes(32))
}

/// A thread-safe counter (callbacks from SQLite's busy handler).
final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
