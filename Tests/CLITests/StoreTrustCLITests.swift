import Foundation
import Testing

/// End to end: the audit trail cannot be shortened unnoticed, free text is not readable in
/// the study database, erase reaches redactable audit texts, writers wait, read-only copies work.
/// Runs on both stores, except what only a study.db file can suffer (an empty file, a row
/// written past SQLite's CHECK constraints, SQLite's write lock, a read-only copy of the file).
@Suite(.serialized)
struct StoreTrustCLITests {
    static let sqlite3 = "/usr/bin/sqlite3"
    /// The tests that edit or read the database behind cohort's back need sqlite3 on SQLite
    /// (on PostgreSQL they go through the database URL).
    static var sqlite3Available: Bool {
        let available = FileManager.default.isExecutableFile(atPath: sqlite3)
        if !available { print("skipping: \(sqlite3) is not installed (apt-get install sqlite3)") }
        return available
    }

    /// Runs `cohort args…` with extra environment variables (CLI.run sets none).
    static func run(_ cli: CLI, _ args: [String], environment extra: [String: String]) throws -> CLI.Result {
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = args
        process.currentDirectoryURL = CLI.repoRoot
        var env = ProcessInfo.processInfo.environment
        env["COHORT_WORKSPACE"] = nil
        env["USER"] = "tester"
        env.merge(extra) { $1 }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CLI.Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
    }

    /// True where the tests' workspaces are on SQLite and sqlite3 is missing.
    static var sqliteWithoutTool: Bool { CLI.store == .sqlite && !sqlite3Available }

    /// The bytes of study.db after its log was checkpointed into it, and of the log; on
    /// PostgreSQL a `pg_dump` of the database.
    static func rawDatabase(_ cli: CLI) throws -> [Data] {
        if CLI.store == .postgres { return [try cli.databaseBytes()] }
        let db = cli.workspace + "/study.db"
        let (status, _) = try CLI.tool(sqlite3, [db, "PRAGMA wal_checkpoint(TRUNCATE)"])
        #expect(status == 0)
        return [db, db + "-wal"].compactMap { FileManager.default.contents(atPath: $0) }
    }

    @Test(.enabled(if: !sqliteWithoutTool, "needs the sqlite3 command-line tool"))
    func aShortenedTrailIsCaught() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        try cli.enrollTwo()
        let older = cli.path("older")
        try CLI.copyWorkspace(cli.workspace, to: older)
        let olderEvents = try cli.count("audit_events")
        let data = try cli.write("pain.csv", "participant,kind,start,value\nP-0001,pain,\(CLI.day(-2))T12:00:00Z,3\n")
        #expect(try cli.ws("data", "import", data).status == 0)
        #expect(try cli.ws("withdraw", "--participant", "P-0002", "--staff", "--reason", "asked", "--mode", "stop", "--yes").status == 0)
        let events = try cli.count("audit_events")
        #expect(events > olderEvents)
        let current = cli.path("current")
        try CLI.copyWorkspace(cli.workspace, to: current)
        let intact = try cli.ws("audit", "verify")
        #expect(intact.status == 0 && intact.stdout.contains("audit.head at event \(events)"), "\(intact.output)")

        // 1. The newest events deleted together with their checkpoints: the chain alone is consistent.
        let keep = olderEvents + 1
        for table in ["audit_events", "audit_checkpoints"] {
            let (status, out) = try cli.sql("DELETE FROM \(table) WHERE seq > \(keep)")
            #expect(status == 0, "\(out)")
        }
        let truncated = try cli.ws("audit", "verify")
        #expect(truncated.status == 1, "\(truncated.output)")
        #expect(truncated.stdout.contains("the database ends at event \(keep) but audit.head names event \(events): events were removed"), "\(truncated.output)")
        // Every other command refuses to work on it (integrity exit code), changing nothing.
        let refused = try cli.ws("participant", "list")
        #expect(refused.status == 7 && refused.stderr.contains("audit.head names event \(events)"), "\(refused.output)")

        // 2. The database rolled back to an older copy (study.db, or the PostgreSQL database).
        try CLI.rollBackDatabase(of: cli.workspace, to: older)
        let rolledBack = try cli.ws("audit", "verify")
        #expect(rolledBack.status == 1)
        #expect(rolledBack.stdout.contains("the database ends at event \(olderEvents) but audit.head names event \(events)"), "\(rolledBack.output)")
        #expect(try cli.ws("data", "import", data).status == 7, "a write on a rolled-back database must not overwrite audit.head")

        // 3. audit.head deleted.
        try CLI.rollBackDatabase(of: cli.workspace, to: current)
        #expect(try cli.ws("audit", "verify").status == 0)
        try FileManager.default.removeItem(atPath: cli.workspace + "/audit.head")
        let missing = try cli.ws("audit", "verify")
        #expect(missing.status == 1 && missing.stdout.contains("audit.head is missing"), "\(missing.output)")
    }

    /// study.db replaced by an empty file: refused, and never re-migrated into an empty study.
    /// SQLite only: a file; a PostgreSQL database cannot be swapped for an empty file.
    @Test(.enabled(if: CLI.store == .sqlite, "study.db is a file only on SQLite"))
    func anEmptyStudyDBIsRefusedNotMigrated() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        try cli.enrollTwo()
        let db = cli.workspace + "/study.db"
        let data = try cli.write("pain.csv", "participant,kind,start,value\nP-0001,pain,\(CLI.day(-2))T12:00:00Z,3\n")
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: db + suffix) }
        try Data().write(to: URL(fileURLWithPath: db))
        for args in [["audit", "verify"], ["participant", "list"], ["data", "import", data]] {
            let r = try cli.run(args + ["-w", cli.workspace])
            #expect(r.status == 7, "\(args): \(r.output)")
            #expect(r.stderr.contains("empty file (0 bytes)"), "\(args): \(r.output)")
        }
        #expect(try FileManager.default.attributesOfItem(atPath: db)[.size] as? NSNumber == 0)
    }

    @Test(.enabled(if: !sqliteWithoutTool, "needs the sqlite3 command-line tool"))
    func eraseRemovesTheReasonAndTheTrailStaysIntact() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        try cli.enrollTwo()
        let reason = "Kwame Abernathy (432) 587-7269"
        let stop = try cli.ws("withdraw", "--participant", "P-0002", "--staff", "--reason", reason, "--mode", "stop", "--yes", "--actor", "Dr Imani Okafor")
        #expect(stop.status == 0, "\(stop.output)")
        let shown = try cli.ws("audit", "show", "--format", "csv")
        #expect(shown.stdout.contains(reason) && shown.stdout.contains("Dr Imani Okafor"), "\(shown.output)")
        // Free text a person typed is never stored in clear, even before an erase.
        for data in try Self.rawDatabase(cli) {
            for needle in ["Kwame", "587-7269", "Okafor"] { #expect(data.range(of: Data(needle.utf8)) == nil, "\(needle) readable in study.db") }
        }
        let (_, ciphertexts) = try cli.sql("SELECT count(*) FROM redactable_texts WHERE participant_id IS NOT NULL")
        #expect(ciphertexts.trimmingCharacters(in: .whitespacesAndNewlines) == "1")

        let erase = try cli.ws("withdraw", "--participant", "P-0002", "--staff", "--reason", reason, "--mode", "erase", "--yes")
        #expect(erase.status == 0, "\(erase.output)")
        let after = try cli.ws("audit", "show", "--format", "csv")
        #expect(!after.stdout.contains("Kwame"), "\(after.output)")
        let withdrawals = after.stdout.split(whereSeparator: \.isNewline).filter { $0.contains("participant.withdraw") }
        #expect(withdrawals.count == 2)
        #expect(withdrawals.allSatisfy { $0.contains("reason=[redacted]") }, "\(withdrawals)")
        #expect(withdrawals.first?.contains("Dr Imani Okafor") == true, "staff names are kept for accountability")
        let verify = try cli.ws("audit", "verify")
        #expect(verify.status == 0 && verify.stdout.contains("intact"), "\(verify.output)")
        let (_, left) = try cli.sql("SELECT count(*) FROM redactable_texts WHERE participant_id IS NOT NULL")
        #expect(left.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        for data in try Self.rawDatabase(cli) {
            for needle in ["Kwame", "Abernathy", "587-7269"] { #expect(data.range(of: Data(needle.utf8)) == nil, "\(needle) left in study.db") }
        }
    }

    @Test func theDefaultActorIsTheOSAccountNotUSER() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        let (status, name) = try CLI.tool("/usr/bin/id", ["-un"])
        #expect(status == 0)
        let account = name.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(account != "tester", "the test sets USER=tester, which must not be believed")
        let shown = try cli.ws("audit", "show", "--format", "csv")
        let rows = shown.stdout.split(whereSeparator: \.isNewline).dropFirst()
        #expect(!rows.isEmpty)
        #expect(rows.allSatisfy { $0.split(separator: ",").dropFirst(2).first.map(String.init) == account }, "\(shown.output)")
    }

    @Test(.enabled(if: !sqliteWithoutTool, "needs the sqlite3 command-line tool"))
    func notesAreNotReadableInTheDatabase() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        try cli.enrollTwo()
        let file = try cli.write(
            "notes.csv",
            "participant,kind,start,value,note\n"
                + "P-0001,pain,\(CLI.day(-3))T12:00:00Z,3,flare after visiting Marguerite in Poughkeepsie\n"
                + "P-0001,pain,\(CLI.day(-2))T12:00:00Z,2,\n")
        let r = try cli.ws("data", "import", file)
        #expect(r.status == 0, "\(r.output)")
        // No clear-text column for notes at all: both stores' records have only `note_enc`
        // (SQLite's v1 `note`, emptied since v2, was dropped by `v5-no-plaintext-note`).
        let (_, plain) = try cli.sql(
            CLI.store == .sqlite
                ? "SELECT count(*) FROM pragma_table_info('records') WHERE name = 'note'"
                : "SELECT count(*) FROM information_schema.columns WHERE table_name = 'records' AND column_name = 'note'")
        #expect(plain.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        let (_, encrypted) = try cli.sql("SELECT count(*) FROM records WHERE note_enc IS NOT NULL")
        #expect(encrypted.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "the one note is stored, encrypted")
        for data in try Self.rawDatabase(cli) {
            for needle in ["Marguerite", "Poughkeepsie", "flare after"] { #expect(data.range(of: Data(needle.utf8)) == nil, "\(needle) readable") }
        }
    }

    /// SQLite only: the row is written past SQLite's CHECK constraints (`PRAGMA
    /// ignore_check_constraints`), which PostgreSQL has no switch for.
    @Test(.enabled(if: CLI.store == .sqlite && sqlite3Available, "SQLite only (PRAGMA ignore_check_constraints); needs the sqlite3 command-line tool"))
    func aCorruptRowFailsTheCommandWithoutInventingAValue() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        try cli.enrollTwo()
        let db = cli.workspace + "/study.db"
        for (sql, message) in [
            ("PRAGMA ignore_check_constraints = ON; UPDATE participants SET status = 'zombie' WHERE code = 'P-0002'", "column status: expected one of active, stopped, excluded, erased"),
            ("PRAGMA ignore_check_constraints = ON; UPDATE participants SET status = 'active', id = 'zombie' WHERE code = 'P-0002'", "column id: expected a UUID"),
        ] {
            #expect(try CLI.tool(Self.sqlite3, [db, sql]).0 == 0)
            let r = try cli.ws("participant", "list")
            #expect(r.status == 7, "\(r.output)")
            #expect(r.stderr.contains("table participants, row 2, \(message)"), "\(r.output)")
            #expect(!r.output.contains("zombie"))
        }
    }

    /// SQLite only: SQLite's write lock (held by sqlite3 here) and COHORT_LOCK_TIMEOUT.
    @Test(.enabled(if: CLI.store == .sqlite && sqlite3Available, "SQLite's write lock; needs the sqlite3 command-line tool"))
    func aSecondWriterWaitsThenGivesUpNamingTheLock() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        try cli.enrollTwo()
        let marker = cli.path("locked")
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: Self.sqlite3)
        holder.arguments = [cli.workspace + "/study.db", "BEGIN IMMEDIATE;", ".shell touch \(marker)", ".shell sleep 4", "COMMIT;"]
        holder.standardOutput = FileHandle.nullDevice
        try holder.run()
        defer { holder.waitUntilExit() }
        while !FileManager.default.fileExists(atPath: marker) { usleep(10_000) }
        let data = try cli.write("pain.csv", "participant,kind,start,value\nP-0001,pain,\(CLI.day(-2))T12:00:00Z,3\n")
        let started = Date()
        let gaveUp = try Self.run(cli, ["data", "import", data, "-w", cli.workspace], environment: ["COHORT_LOCK_TIMEOUT": "1.5"])
        #expect(Date().timeIntervalSince(started) >= 1.4)
        #expect(gaveUp.status == 5, "\(gaveUp.output)")
        #expect(gaveUp.stderr.components(separatedBy: "waiting for another cohort command").count == 2, "printed once: \(gaveUp.stderr)")
        #expect(gaveUp.stderr.contains("write lock for more than 1.5 s") && gaveUp.stderr.contains("COHORT_LOCK_TIMEOUT"), "\(gaveUp.output)")
        #expect(!gaveUp.stderr.contains("SQLite error 5"))
        // With the default limit the same command waits for the lock and succeeds.
        let waited = try Self.run(cli, ["data", "import", data, "-w", cli.workspace], environment: [:])
        #expect(waited.status == 0, "\(waited.output)")
        #expect(try cli.count("records") == 1)
    }

    /// SQLite only: a read-only copy of the workspace folder is a copy of study.db; on PostgreSQL
    /// the copy's store.json names the same database.
    @Test(.enabled(if: CLI.store == .sqlite, "a read-only copy of study.db; on PostgreSQL the folder copy names the same database"))
    func readOnlyCommandsWorkOnAReadOnlyCopy() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        try cli.enrollTwo()
        let copy = cli.path("auditor-copy")
        try FileManager.default.copyItem(atPath: cli.workspace, toPath: copy)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copy + "/study.db" + suffix) }
        // The copy was taken while no command ran; make sure its log is folded in first.
        let original = try Data(contentsOf: URL(fileURLWithPath: cli.workspace + "/study.db"))
        #expect(!original.isEmpty)
        #expect(try CLI.tool("/bin/chmod", ["-R", "a-w", copy]).0 == 0)
        defer { _ = try? CLI.tool("/bin/chmod", ["-R", "u+w", copy]) }
        let before = try Data(contentsOf: URL(fileURLWithPath: copy + "/study.db"))
        for args in [["audit", "verify"], ["audit", "show"], ["participant", "list"], ["compliance"], ["consent", "status"]] {
            let r = try cli.run(args + ["-w", copy])
            #expect(r.status == 0, "\(args) on a read-only copy: \(r.output)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy + "/study.db")) == before, "a read-only command changed the copy")
        #expect(!FileManager.default.fileExists(atPath: copy + "/study.db-wal"))
    }

    /// `verify -w` on an auditor's read-only copy of a demo workspace (whose notes are encrypted
    /// at rest and decrypted for the export).
    @Test func verifyWithAWorkspaceWorksOnAReadOnlyCopy() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let demo = try cli.run(["demo", "--dir", cli.workspace, "--participants", "6", "--seed", "1"])
        try #require(demo.status == 0, "demo failed: \(demo.output)")
        let export = try cli.run(["export", "--recipient", "Lab A", "--out", cli.path("out"), "-w", cli.workspace])
        #expect(export.status == 0, "\(export.output)")
        var archivePath: String?
        for line in export.stdout.split(whereSeparator: \.isNewline) {
            let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            if words.count >= 2, words[0] == "archive" { archivePath = words[1] }
        }
        let archive = try #require(archivePath, "\(export.output)")
        let copy = cli.path("auditor-copy")
        try FileManager.default.copyItem(atPath: cli.workspace, toPath: copy)
        #expect(try CLI.tool("/bin/chmod", ["-R", "a-w", copy]).0 == 0)
        defer { _ = try? CLI.tool("/bin/chmod", ["-R", "u+w", copy]) }
        let verify = try cli.run(["verify", archive, "-w", copy])
        #expect(verify.status == 0, "\(verify.output)")
    }
}

extension StoreTrustCLITests {
    /// Issue #30: whoever holds the study's signing key (every site, today) can re-sign a manifest
    /// that names the pinned protocol but claims another policy. `verify -w` recomputes the policy
    /// hash from the protocol revision the manifest names, as the store holds it (re-hashed
    /// against its pin), so the forged claim fails whatever its signature says.
    @Test func verifyRecomputesThePolicyFromThePinnedProtocol() throws {
        let helper = ExportCLITests()
        let cli = try helper.demo()
        defer { cli.cleanup() }
        let published = try helper.exported(cli)
        let check = "policy of the pinned protocol"
        let good = try cli.run(["verify", published.archive, "-w", cli.workspace])
        #expect(good.status == 0 && helper.passed(good, check), "\(good.stdout)")
        var text = try String(contentsOfFile: published.manifest, encoding: .utf8)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let policy = try #require(object["policy_sha256"] as? String)
        text = text.replacingOccurrences(of: policy, with: String(repeating: "0", count: 64))
        try Data(text.utf8).write(to: URL(fileURLWithPath: published.manifest))
        let (signed, signOut) = try CLI.tool(
            "/usr/bin/openssl", ["pkeyutl", "-sign", "-inkey", cli.workspace + "/keys/signing.pem", "-rawin", "-in", published.manifest, "-out", published.signature])
        try #require(signed == 0, "openssl: \(signOut)")
        let forged = try cli.run(["verify", published.archive, "-w", cli.workspace])
        #expect(forged.status == 1 && helper.failed(forged, check), "\(forged.stdout)")
        #expect(forged.stdout.contains("is not the policy of pinned revision"), "\(forged.stdout)")
    }
}
