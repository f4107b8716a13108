import CohortPostgres
import Foundation
import Testing

/// Runs the built `cohort` binary in a temporary directory.
///
/// With `COHORT_TEST_STORE=postgres` every workspace the tests create (`cohort init`, `cohort
/// demo`) is a study on PostgreSQL: the harness adds `--database` with a fresh database on one
/// throwaway cluster per test process (`scripts/test.sh` runs the store-relevant suites so).
struct CLI {
    /// The study store the tests' workspaces use.
    enum Store: String {
        case sqlite, postgres
    }

    /// `COHORT_TEST_STORE` (`sqlite` when unset).
    static let store: Store = {
        let name = ProcessInfo.processInfo.environment["COHORT_TEST_STORE"] ?? "sqlite"
        return Store(rawValue: name) ?? .sqlite
    }()

    /// The URL of a new, empty database on this process's shared throwaway cluster (started on
    /// first use, stopped at exit).
    static func freshDatabaseURL() throws -> String { try ScratchCluster.freshSharedDatabase(prefix: "cli_") }

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
        var args = args
        if Self.store == .postgres, let command = args.first, command == "init" || command == "demo", !args.contains("--help"),
            !args.contains("--database")
        {
            args += ["--database", try Self.freshDatabaseURL()]
        }
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

    /// Counts rows of a table of the workspace's study database.
    func count(_ table: String) throws -> Int {
        let (status, out) = try sql("SELECT count(*) FROM \(table)")
        #expect(status == 0)
        return Int(out.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// Runs `query` on the workspace's study database — with the sqlite3 tool on study.db, or on
    /// the PostgreSQL database its store.json names — and returns the status and the rows as
    /// sqlite3 prints them (one per line, columns joined by `|`).
    func sql(_ query: String, workspace: String? = nil) throws -> (Int32, String) {
        let folder = workspace ?? self.workspace
        let configuration = URL(fileURLWithPath: folder).appendingPathComponent("store.json")
        guard let data = FileManager.default.contents(atPath: configuration.path) else {
            return try Self.tool("/usr/bin/sqlite3", [folder + "/study.db", query])
        }
        struct StoreFile: Decodable { var url: String }
        let url = try JSONDecoder().decode(StoreFile.self, from: data).url
        do {
            let rows = try PostgresConnection(url: url).query(query)
            return (0, rows.map { $0.map { $0 ?? "" }.joined(separator: "|") }.joined(separator: "\n") + (rows.isEmpty ? "" : "\n"))
        } catch {
            return (1, String(describing: error))
        }
    }

    /// Every byte of the workspace's study database an attacker with a copy would have: study.db
    /// with its WAL, or a `pg_dump` of the PostgreSQL database.
    func databaseBytes() throws -> Data {
        let configuration = URL(fileURLWithPath: workspace).appendingPathComponent("store.json")
        guard let data = FileManager.default.contents(atPath: configuration.path) else {
            var raw = Data()
            for suffix in ["", "-wal", "-shm"] { raw += (try? Data(contentsOf: URL(fileURLWithPath: workspace + "/study.db" + suffix))) ?? Data() }
            return raw
        }
        struct StoreFile: Decodable { var url: String }
        let url = try JSONDecoder().decode(StoreFile.self, from: data).url
        let (status, dump) = try Self.tool(ScratchCluster.defaultBinDirectory + "/pg_dump", ["--data-only", url])
        #expect(status == 0, "pg_dump failed: \(dump.prefix(300))")
        return Data(dump.utf8)
    }
}
