import Foundation
import Testing

/// Runs the built `cohort` binary in a temporary directory.
struct CLI {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var output: String { stdout + stderr }
    }

    static let repoRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["COHORT_BIN"] { return URL(fileURLWithPath: path) }
        let candidates = [".build/debug/cohort", ".build/release/cohort"].map { repoRoot.appendingPathComponent($0) }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-cli-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func cleanup() { try? FileManager.default.removeItem(at: directory) }

    var workspace: String { directory.appendingPathComponent("ws").path }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    /// Runs `cohort args…` with the working directory set to the repo root (protocols/ resolve),
    /// or to `directory`; `binary` replaces the built binary (an installed copy).
    @discardableResult
    func run(_ args: [String], stdin: String? = nil, in directory: URL? = nil, binary: URL? = nil) throws -> Result {
        let process = Process()
        process.executableURL = binary ?? Self.binary
        process.arguments = args
        process.currentDirectoryURL = directory ?? Self.repoRoot
        var env = ProcessInfo.processInfo.environment
        env["COHORT_WORKSPACE"] = nil
        env["USER"] = "tester"
        process.environment = env
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
    }

    /// `cohort args… -w <workspace>`
    @discardableResult
    func ws(_ args: String...) throws -> Result { try run(args + ["-w", workspace]) }

    /// Runs an external tool (sqlite3, openssl…).
    @discardableResult
    static func tool(_ path: String, _ args: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = args
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Today (UTC) minus `days`, as YYYY-MM-DD.
    static func day(_ offset: Int) -> String {
        let date = Date().addingTimeInterval(Double(offset) * 86_400)
        let f = DateFormatter()
        f.dateFormat = "yyyy-MM-dd"
        f.timeZone = TimeZone(identifier: "UTC")
        f.locale = Locale(identifier: "en_US_POSIX")
        return f.string(from: date)
    }

    /// A workspace with the minimal protocol... or another; returns the CLI.
    static func withWorkspace(protocolFile: String = "protocols/axspa-wearables.yaml") throws -> CLI {
        let cli = try CLI()
        let r = try cli.run(["init", "--dir", cli.workspace, "--protocol", protocolFile])
        #expect(r.status == 0, "init failed: \(r.output)")
        return cli
    }

    static let rosterHeader = "code,name,email,phone,birth_date,sex,address,zip,mrn,time_zone,enrolled_on,devices\n"

    func enrollTwo() throws {
        let roster = try write(
            "roster.csv",
            Self.rosterHeader + "P-0001,Zoë O'Brien,zoe@example.net,(555) 123-4567,1980-02-29,female,12 Harbor Drive,02139,MRN1234567,Europe/Berlin,\(Self.day(-20)),Zoë's Apple Watch\n"
                + "P-0002,José García-López,jose@example.net,+1 555 987 6543,1950-07-01,male,\"7 Elm Road, Apt 2\",10027,MRN7654321,America/New_York,\(Self.day(-20)),\n")
        let r = try run(["participant", "import", roster, "-w", workspace])
        #expect(r.status == 0, "roster import failed: \(r.output)")
        for code in ["P-0001", "P-0002"] {
            let c = try run(["consent", "record", "--participant", code, "--version", "1.0", "--signed-at", "\(Self.day(-20))T12:00:00Z", "-w", workspace])
            #expect(c.status == 0, "consent failed: \(c.output)")
        }
    }

    /// Counts rows of a table with the sqlite3 tool.
    func count(_ table: String) throws -> Int {
        let (status, out) = try Self.tool("/usr/bin/sqlite3", [workspace + "/study.db", "SELECT count(*) FROM \(table)"])
        #expect(status == 0)
        return Int(out.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }
}
