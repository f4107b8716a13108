import CohortCore
import Foundation
import Testing

@testable import CohortKit
import CohortStore

/// One demo workspace (12 synthetic participants, one re-consent, one exclude and one erase
/// withdrawal, one signed export) shared by the report tests, and independent ways to count
/// what the report shows: SQL through the sqlite3 tool, and the published files.
enum ReportFixture {
    struct Demo: Sendable {
        var directory: URL
        var archive: URL
        var now: Date
    }

    static let demo: Result<Demo, any Error> = Result {
        let root = try ExampleFiles.temporaryCopy()
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("report-demo-\(UUID().uuidString)", isDirectory: true)
        let now = Date()
        _ = try DemoRun(directory: directory, seed: 5, participants: 12, actor: "report-test", projectRoot: root, now: { now }).run()
        let exports = directory.appendingPathComponent("exports")
        let archive = try FileManager.default.contentsOfDirectory(atPath: exports.path).filter { $0.hasSuffix(".tar.gz") }.sorted().last
        return Demo(directory: directory, archive: exports.appendingPathComponent(try #require(archive)), now: now)
    }

    static func workspace() throws -> (Workspace, Demo) {
        let demo = try demo.get()
        return (try Workspace.open(at: demo.directory, actor: "report-test", now: { demo.now }, options: .init(readOnly: true)), demo)
    }

    /// Rows of `sql` over the workspace's study.db, as fields split on `|`.
    static func sql(_ demo: Demo, _ sql: String) throws -> [[String]] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = ["-readonly", demo.directory.appendingPathComponent("study.db").path, sql]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "sqlite3 failed on: \(sql)")
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
    }

    /// A fresh temporary folder.
    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("report-test-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The archive unpacked with the system's tar into a fresh folder; returns the bag folder.
    static func unpack(_ archive: URL) throws -> URL {
        let target = try folder()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/tar")
        process.arguments = ["-xzf", archive.path, "-C", target.path]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        let bag = try #require(try FileManager.default.contentsOfDirectory(atPath: target.path).first)
        return target.appendingPathComponent(bag)
    }

    /// A CSV file as rows of fields (RFC 4180 quoting).
    static func csv(_ url: URL) throws -> [[String]] {
        let text = try String(contentsOf: url, encoding: .utf8)
        var rows: [[String]] = [], row: [String] = [], field = ""
        var quoted = false, wasQuoted = false
        var iterator = text.makeIterator()
        while let c = iterator.next() {
            if quoted {
                if c == "\"" { quoted = false } else { field.append(c) }
                continue
            }
            switch c {
            case "\"":
                if wasQuoted { field.append("\"") }
                quoted = true
                wasQuoted = true
            case ",":
                row.append(field)
                field = ""
                wasQuoted = false
            case "\r\n", "\n":
                row.append(field)
                rows.append(row)
                row = []
                field = ""
                wasQuoted = false
            default:
                field.append(c)
                wasQuoted = false
            }
        }
        if !field.isEmpty || !row.isEmpty { rows.append(row + [field]) }
        return rows
    }
}
