import Foundation
import CohortPostgres
import Testing

/// Sites from the command line: enrollment, the roster listing, a site-scoped export, and the
/// SQL of `cohort site` (the PostgreSQL side is tested on a live server in CohortStorePostgresTests).
@Suite(.serialized)
struct SitesCLITests {
    /// Two participants at site-a from a roster with a site column, one at site-b by flag.
    static func workspace() throws -> CLI {
        let cli = try CLI.withWorkspace(protocolFile: "protocols/minimal.yaml")
        let day = CLI.day(-20)
        let roster = try cli.write(
            "roster.csv",
            CLI.rosterHeader.dropLast() + ",site\n"
                + "P-0001,Ann Qxlee,,,1980-02-01,female,,,,Europe/Berlin,\(day),,site-a\n"
                + "P-0002,Bob Qxlee,,,1981-02-01,male,,,,Europe/Berlin,\(day),,site-a\n")
        let r = try cli.ws("participant", "import", roster, "--tokens", cli.path("tokens.csv"))
        #expect(r.status == 0, "\(r.output)")
        let e = try cli.ws(
            "participant", "enroll", "--code", "P-0003", "--name", "Cy Qxlee", "--time-zone", "Europe/Paris", "--enrolled-on", day, "--site", "site-b",
            "--tokens", cli.path("tokens-3.csv"))
        #expect(e.status == 0, "\(e.output)")
        for code in ["P-0001", "P-0002", "P-0003"] {
            let c = try cli.ws("consent", "record", "--sharing", "broad", "--participant", code, "--version", "1.0", "--signed-at", "\(day)T12:00:00Z")
            #expect(c.status == 0, "\(c.output)")
        }
        return cli
    }

    @Test func listFiltersBySiteAndShowsTheSiteColumn() throws {
        let cli = try Self.workspace()
        defer { cli.cleanup() }
        let all = try cli.ws("participant", "list", "--format", "csv")
        let lines = all.stdout.split(whereSeparator: \.isNewline).map(String.init)
        #expect(lines.first?.hasPrefix("code,site,status") == true, "\(all.stdout)")
        #expect(lines.contains { $0.hasPrefix("P-0003,site-b,") })
        let a = try cli.ws("participant", "list", "--site", "site-a", "--format", "json")
        #expect(a.status == 0, "\(a.output)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(a.stdout.utf8)) as? [[String: Any]])
        #expect(rows.compactMap { $0["code"] as? String }.sorted() == ["P-0001", "P-0002"])
        #expect(rows.allSatisfy { $0["site"] as? String == "site-a" })
        let unknown = try cli.ws("participant", "list", "--site", "site-c")
        #expect(unknown.status != 0 && unknown.stderr.contains("site-c") && unknown.stderr.contains("sites: site-a, site-b"), "\(unknown.output)")
    }

    @Test func malformedSiteIsRefusedAndNothingEnrolled() throws {
        let cli = try CLI.withWorkspace(protocolFile: "protocols/minimal.yaml")
        defer { cli.cleanup() }
        let r = try cli.ws(
            "participant", "enroll", "--code", "P-0009", "--name", "Di Qxlee", "--time-zone", "UTC", "--site", "Site A", "--tokens", cli.path("t.csv"))
        #expect(r.status == 3, "\(r.output)")
        #expect(r.stderr.contains("site") && !r.stderr.contains("Site A"), "\(r.stderr)")
        #expect(try cli.count("participants") == 0)
    }

    @Test func exportOfOneSiteStatesItsScope() throws {
        let cli = try Self.workspace()
        defer { cli.cleanup() }
        let out = cli.path("out")
        let r = try cli.ws("export", "--recipient", "lab-a", "--site", "site-a", "--out", out)
        #expect(r.status == 0, "\(r.output)")
        #expect(r.stdout.contains("Exported 2 participants") && r.stdout.contains("(site site-a only)"), "\(r.stdout)")
        let manifest = try #require(try FileManager.default.contentsOfDirectory(atPath: out).first { $0.hasSuffix(".manifest.json") })
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/" + manifest))) as? [String: Any])
        #expect(json["site"] as? String == "site-a")
        let verify = try cli.ws("verify", out + "/" + manifest.replacingOccurrences(of: ".manifest.json", with: ".tar.gz"))
        #expect(verify.status == 0, "\(verify.output)")
        let audit = try cli.ws("audit", "show", "--format", "json")
        #expect(audit.stdout.contains("\"site\"") && audit.stdout.contains("site-a"), "export and enrollment events carry the site")
    }

    @Test func siteCommandsPrintTheirSQLOnADryRun() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let add = try cli.run(["site", "add", "site-a", "--dry-run"])
        #expect(add.status == 0, "\(add.output)")
        #expect(add.stdout.contains("BEGIN;") && add.stdout.contains("CREATE ROLE \"cohort_site_site-a\" NOLOGIN") && add.stdout.contains("COMMIT;"))
        let grant = try cli.run(["site", "grant", "--study-wide", "--role", "monitor", "--dry-run"])
        #expect(grant.stdout.contains("GRANT \"cohort_study_wide\" TO \"monitor\";"), "\(grant.output)")
        let noDatabase = try cli.run(["site", "add", "site-a", "--database", ""])
        #expect(noDatabase.status != 0 && noDatabase.stderr.contains("--database"), "\(noDatabase.output)")
        let both = try cli.run(["site", "grant", "site-a", "--study-wide", "--role", "x", "--dry-run"])
        #expect(both.status != 0 && both.stderr.contains("not both"), "\(both.output)")
        let bad = try cli.run(["site", "add", "Site A", "--dry-run"])
        #expect(bad.status == 3 && bad.stderr.contains("site name"), "\(bad.output)")
    }

    /// In the PostgreSQL pass (`COHORT_TEST_STORE=postgres`, run by scripts/test.sh), `cohort site`
    /// finds the database through the workspace's store.json, as the README's setup does.
    @Test(.enabled(if: CLI.store == .postgres, "runs in the PostgreSQL pass of scripts/test.sh (COHORT_TEST_STORE=postgres)"))
    func siteCommandsUseTheWorkspacesDatabase() throws {
        let cli = try Self.workspace()
        defer { cli.cleanup() }
        let add = try cli.ws("site", "add", "site-a")
        #expect(add.status == 0 && add.stdout.contains("Done:"), "\(add.output)")
        let (status, roles) = try cli.sql("SELECT count(*) FROM pg_roles WHERE rolname = 'cohort_site_site-a'")
        #expect(status == 0 && roles.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "\(roles)")
    }
}

extension SitesCLITests {
    /// Issue #30's attacks through cohort and a coordinator's own SQL, on PostgreSQL: a site
    /// coordinator's workspace (the owner's folder pointed at the coordinator's login role) cannot
    /// load a protocol, write the audit trail or erase who did what; its events carry its login
    /// role whatever `--actor` says; a protocol changed behind cohort's back stops its commands
    /// with exit 7. Each verdict is recomputed by the owner's `audit verify`.
    @Test(.enabled(if: CLI.store == .postgres, "runs in the PostgreSQL pass of scripts/test.sh (COHORT_TEST_STORE=postgres)"))
    func aSiteCoordinatorCannotRewriteTheStudyOrTheTrail() throws {
        let cli = try Self.workspace()
        defer { cli.cleanup() }
        let ownerURL = try #require(try CLI.databaseURL(of: cli.workspace))
        let login = "alice_" + UUID().uuidString.prefix(8).lowercased()
        let (made, out) = try cli.sql("CREATE ROLE \(login) LOGIN")
        try #require(made == 0, "\(out)")
        #expect(try cli.ws("site", "add", "site-a").status == 0)
        let grant = try cli.ws("site", "grant", "site-a", "--role", login)
        #expect(grant.status == 0, "\(grant.output)")
        // Alice's workspace: the owner's folder with her login role in store.json (docs/multi-site.md).
        let alice = cli.path("alice")
        let (copied, copyOut) = try CLI.tool("/bin/cp", ["-a", cli.workspace, alice])
        try #require(copied == 0, "\(copyOut)")
        let store = URL(fileURLWithPath: alice).appendingPathComponent("store.json")
        let text = try String(contentsOf: store, encoding: .utf8)
        try Data(text.replacingOccurrences(of: "postgresql://postgres@", with: "postgresql://\(login)@").utf8).write(to: store)
        func asAlice(_ args: String...) throws -> CLI.Result { try cli.run(args + ["-w", alice]) }

        // Her enrollment is stamped with her login role, whatever --actor says.
        let day = CLI.day(-10)
        let enroll = try asAlice(
            "participant", "enroll", "--code", "A-0009", "--name", "Di Qxlee", "--time-zone", "Europe/Berlin", "--enrolled-on", day, "--site", "site-a",
            "--tokens", cli.path("tokens-a.csv"), "--actor", "Bob the owner")
        #expect(enroll.status == 0, "\(enroll.output)")
        let (_, role) = try cli.sql("SELECT \(CLI.detail("db_role")) FROM audit_events ORDER BY seq DESC LIMIT 1")
        #expect(role.trimmingCharacters(in: .whitespacesAndNewlines) == login)

        // A new protocol revision from her workspace is refused as a missing privilege (exit 6).
        let protocolText = try String(contentsOf: CLI.repoRoot.appendingPathComponent("protocols/minimal.yaml"), encoding: .utf8)
        // Templates resolve from the protocol folder's parent, as in the repository (protocols/, templates/).
        try FileManager.default.createDirectory(atPath: cli.path("protocols"), withIntermediateDirectories: true)
        let amended = try cli.write("protocols/minimal-2.yaml", protocolText.replacingOccurrences(of: "\nrevision: 1\n", with: "\nrevision: 2\n"))
        try FileManager.default.createSymbolicLink(atPath: cli.path("templates"), withDestinationPath: CLI.repoRoot.appendingPathComponent("templates").path)
        let load = try asAlice("protocol", "load", amended)
        #expect(load.status == 6 && load.stderr.contains("lacks the privilege"), "\(load.output)")

        // Her own SQL (psql's statements, through libpq as her role) cannot write the trail or erase who did what.
        for attack in [
            "INSERT INTO audit_events (seq, at, actor, action, subject, details, details_text, prev_hash, hash) VALUES (1000000, 'x', 'x', 'x', NULL, '{}', '{}', repeat('0', 64), repeat('0', 64))",
            "INSERT INTO audit_checkpoints (seq, head_hash, signature, at) VALUES (1, repeat('0', 64), 'junk', 'x')",
            "DELETE FROM redactable_texts WHERE participant_id IS NULL",
            "UPDATE protocol_revisions SET canonical_json = canonical_json",
            "DO $$ BEGIN LOCK TABLE participants IN ACCESS EXCLUSIVE MODE; END $$",
        ] {
            let (status, output) = try cli.sql(attack, workspace: alice)
            #expect(status != 0 && output.contains("42501"), "\(attack.prefix(40)): \(output)")
        }
        for workspace in [cli.workspace, alice] {
            let verify = try cli.run(["audit", "verify", "-w", workspace])
            #expect(verify.status == 0, "\(verify.output)")
        }

        // A protocol changed behind cohort's back (the owner's SQL) stops her next command: exit 7.
        _ = try PostgresConnection(url: ownerURL).query("UPDATE protocol_revisions SET canonical_json = canonical_json || '\\x20'::bytea WHERE is_current")
        let list = try asAlice("participant", "list")
        #expect(list.status == 7 && list.stderr.contains("pinned"), "\(list.output)")
    }
}
