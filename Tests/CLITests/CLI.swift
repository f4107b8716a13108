import CohortPostgres
import CohortTestSupport
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

    /// The file of a new workspace that holds or names its study: study.db, or store.json (the
    /// PostgreSQL URL) — both private to the owner.
    static var storeFile: String { store == .postgres ? "store.json" : "study.db" }

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

    /// The test-only `cohort export` held after its snapshot (`cohort-export-paused GATE
    /// --recipient NAME --out DIR -w WORKSPACE`), built next to ``binary``.
    static var pausedExport: URL { binary.deletingLastPathComponent().appendingPathComponent("cohort-export-paused") }

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
    /// or to `directory`; `binary` replaces the built binary (an installed copy); `environment`
    /// is set on top of the test process's.
    @discardableResult
    func run(_ args: [String], stdin: String? = nil, in directory: URL? = nil, binary: URL? = nil, environment: [String: String] = [:]) throws -> Result {
        var args = args
        if Self.store == .postgres, let command = args.first, command == "init" || command == "demo", !args.contains("--help"),
            !args.contains("--database")
        {
            args += ["--database", try Self.freshDatabaseURL()]
        }
        var env = ProcessInfo.processInfo.environment
        env["COHORT_WORKSPACE"] = nil
        env["USER"] = "tester"
        env.merge(environment) { $1 }
        let outcome = try ChildProcess.run(
            (binary ?? Self.binary).path, args, environment: env, directory: (directory ?? Self.repoRoot).path, stdin: Array((stdin ?? "").utf8))
        return Result(status: outcome.status, stdout: String(decoding: outcome.stdout, as: UTF8.self), stderr: String(decoding: outcome.stderr, as: UTF8.self))
    }

    /// `cohort args… -w <workspace>`
    @discardableResult
    func ws(_ args: String...) throws -> Result { try run(args + ["-w", workspace]) }

    /// `ws` with the arguments as an array.
    func ws(_ args: [String]) throws -> Result { try run(args + ["-w", workspace]) }

    /// Runs an external tool (sqlite3, openssl…).
    @discardableResult
    static func tool(_ path: String, _ args: [String]) throws -> (Int32, String) {
        let outcome = try ChildProcess.run(path, args, mergingErrors: true)
        return (outcome.status, String(decoding: outcome.stdout, as: UTF8.self))
    }

    /// An export instant 200 days from now, past the shipped protocols' embargo (max_days, at most
    /// 182): every record is published whatever the participant's random shift.
    static var pastTheEmbargo: String { ISO8601DateFormatter().string(from: Date().addingTimeInterval(200 * 86_400)) }

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
            let c = try run(["consent", "record", "--sharing", "broad", "--participant", code, "--version", "1.0", "--signed-at", "\(Self.day(-20))T12:00:00Z", "-w", workspace])
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
    func sql(_ query: String, workspace: String? = nil) throws -> (Int32, String) { try Self.sql(query, workspace: workspace ?? self.workspace) }

    /// ``sql(_:workspace:)`` for the workspace folder `folder`.
    static func sql(_ query: String, workspace folder: String) throws -> (Int32, String) {
        guard let url = try databaseURL(of: folder) else {
            return try tool("/usr/bin/sqlite3", [folder + "/study.db", query])
        }
        do {
            let rows = try PostgresConnection(url: url).query(query)
            return (0, rows.map { $0.map { $0 ?? "" }.joined(separator: "|") }.joined(separator: "\n") + (rows.isEmpty ? "" : "\n"))
        } catch {
            return (1, String(describing: error))
        }
    }

    /// Rows of ``sql(_:workspace:)`` with the real number in column `column` (0-based) printed as
    /// Swift prints a `Double` ("610.0"), as sqlite3 prints it; PostgreSQL's text form is "610".
    static func rows(_ out: String, realColumn column: Int) -> [String] {
        out.split(separator: "\n").map { line in
            var fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            if fields.count > column, let value = Double(fields[column]) { fields[column] = "\(value)" }
            return fields.joined(separator: "|")
        }
    }

    /// The database URL the workspace's store.json names, or nil for a workspace on study.db.
    static func databaseURL(of folder: String) throws -> String? {
        let configuration = URL(fileURLWithPath: folder).appendingPathComponent("store.json")
        guard let data = FileManager.default.contents(atPath: configuration.path) else { return nil }
        struct StoreFile: Decodable { var url: String }
        return try JSONDecoder().decode(StoreFile.self, from: data).url
    }

    /// A JSON member of an audit event's `details` as text, in the SQL of the tests' store:
    /// `json_extract(details, '$.key')` on SQLite, `details ->> 'key'` on PostgreSQL.
    static func detail(_ key: String, of table: String? = nil) -> String {
        let column = table.map { $0 + ".details" } ?? "details"
        return store == .postgres ? "(\(column) ->> '\(key)')" : "json_extract(\(column), '$.\(key)')"
    }

    /// The name of the database a libpq URL of the shared cluster names (`…@/name?host=…`).
    static func databaseName(_ url: String) throws -> String {
        guard let start = url.range(of: "@/"), let end = url.range(of: "?", range: start.upperBound..<url.endIndex) else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "store.json: url: expected postgresql://user@/database?host=…"])
        }
        return String(url[start.upperBound..<end.lowerBound])
    }

    /// Copies a workspace folder with its modes (`cp -a`). A workspace on PostgreSQL gets its own
    /// copy of the database too (a new database made from it as a template on the same cluster,
    /// named in the copy's store.json), so the copy is what a copy of study.db is: the study as it
    /// was, which later commands on the original do not change.
    static func copyWorkspace(_ from: String, to destination: String) throws {
        let (status, out) = try tool("/bin/cp", ["-a", from, destination])
        try #require(status == 0, "cp -a: \(out)")
        guard let url = try databaseURL(of: from) else { return }
        let name = try databaseName(url)
        let copy = "cli_copy_" + UUID().uuidString.prefix(13).lowercased().replacingOccurrences(of: "-", with: "")
        let admin = url.replacingOccurrences(of: "@/\(name)?", with: "@/postgres?")
        try PostgresConnection(url: admin).query("CREATE DATABASE \(copy) TEMPLATE \(name)")
        let file = URL(fileURLWithPath: destination).appendingPathComponent("store.json")
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        object["url"] = url.replacingOccurrences(of: "@/\(name)?", with: "@/\(copy)?")
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) + Data("\n".utf8))
    }

    /// Rolls the study database of the workspace at `folder` back to the one of `copy` (made by
    /// ``copyWorkspace(_:to:)`` earlier), as an attacker with a backup would: study.db replaced by
    /// the copy's (its log removed), or the PostgreSQL database dropped and made again from the
    /// copy's, under the same name. Nothing else of the workspace (keys, audit.head) changes.
    static func rollBackDatabase(of folder: String, to copy: String) throws {
        guard let url = try databaseURL(of: folder) else {
            let fm = FileManager.default
            for suffix in ["", "-wal", "-shm"] {
                try? fm.removeItem(atPath: folder + "/study.db" + suffix)
                if fm.fileExists(atPath: copy + "/study.db" + suffix) { try fm.copyItem(atPath: copy + "/study.db" + suffix, toPath: folder + "/study.db" + suffix) }
            }
            return
        }
        let name = try databaseName(url)
        let old = try databaseName(try #require(try databaseURL(of: copy), "the copy has no store.json"))
        let admin = try PostgresConnection(url: url.replacingOccurrences(of: "@/\(name)?", with: "@/postgres?"))
        try admin.query("DROP DATABASE \(name)")
        try admin.query("CREATE DATABASE \(name) TEMPLATE \(old)")
    }

    /// Every byte of the workspace's study database an attacker with a copy would have: study.db
    /// with its WAL, or a `pg_dump` of the PostgreSQL database.
    func databaseBytes() throws -> Data {
        guard let url = try Self.databaseURL(of: workspace) else {
            var raw = Data()
            for suffix in ["", "-wal", "-shm"] { raw += (try? Data(contentsOf: URL(fileURLWithPath: workspace + "/study.db" + suffix))) ?? Data() }
            return raw
        }
        let (status, dump) = try Self.tool(ScratchCluster.defaultBinDirectory + "/pg_dump", ["--data-only", url])
        #expect(status == 0, "pg_dump failed: \(dump.prefix(300))")
        return Data(dump.utf8)
    }
}
