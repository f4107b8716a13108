import CohortCore
import CohortPostgres
import CohortStore
import CohortStorePostgres
import Foundation
import Testing

/// Row-level security by site (migration `v3-site-security`) on a live server, in SQL: fixture
/// rows are inserted by the owner of the study's tables, then each coordinator's login role
/// connects and is checked for what it sees and cannot change.
///
/// Roles: `study_owner` (owns the tables, CREATEROLE, not a superuser: superusers bypass RLS),
/// `coord_a` (site-a), `coord_b` (site-b), `monitor` (study-wide), `stranger` (no grant).
@Suite(.serialized)
struct PostgresSiteSecurityTests {
    /// A study database with the fixture: participants 1, 2 at site-a, 3, 4 at site-b, 5 without a
    /// site; each with one consent and three records, participant 2 and 4 withdrawn; a redactable
    /// text for participant 1, one for 3 and one for no participant; four audit events.
    struct Study {
        let url: @Sendable (String) -> String
        var owner: String { url("study_owner") }

        init() throws {
            let (url, name) = try SharedCluster.newDatabase()
            self.url = url
            let admin = try PostgresConnection(url: url("postgres"))
            // Roles are cluster-wide: made once for the whole cluster (under the process's role lock).
            _ = try SharedCluster.roles.withLock {
                try admin.query(
                """
                DO $$ BEGIN
                  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'study_owner') THEN
                    CREATE ROLE study_owner LOGIN CREATEROLE;
                    CREATE ROLE coord_a LOGIN; CREATE ROLE coord_b LOGIN; CREATE ROLE monitor LOGIN; CREATE ROLE stranger LOGIN;
                  END IF;
                END $$
                """)
            }
            try admin.query("ALTER DATABASE \(name) OWNER TO study_owner")
            _ = try PostgresStudyStore(url: url("study_owner"), piiKey: Array(repeating: 7, count: 32), create: true)
            let owner = try PostgresConnection(url: url("study_owner"))
            // One statement per call (the extended query protocol takes one).
            for statement in [
                """
                INSERT INTO participants (id, code, site, sex, time_zone, enrolled_on, created_at) VALUES
                  ('00000000-0000-4000-8000-000000000001', 'P-0001', 'site-a', 'female', 'Europe/Berlin', '2026-02-01', 'x'),
                  ('00000000-0000-4000-8000-000000000002', 'P-0002', 'site-a', 'male', 'Europe/Berlin', '2026-02-01', 'x'),
                  ('00000000-0000-4000-8000-000000000003', 'P-0003', 'site-b', 'female', 'Europe/Paris', '2026-02-01', 'x'),
                  ('00000000-0000-4000-8000-000000000004', 'P-0004', 'site-b', 'male', 'Europe/Paris', '2026-02-01', 'x'),
                  ('00000000-0000-4000-8000-000000000005', 'P-0005', NULL, 'unknown', 'UTC', '2026-02-01', 'x')
                """,
                """
                INSERT INTO consents (id, participant_pk, version, document_sha256, signed_at_ms, signed_offset, signature_kind, sharing, status,
                                      recorded_at_ms, recorded_offset)
                  SELECT gen_random_uuid(), pk, '1.1', repeat('a', 64), 0, 0, 'typed', 'broad', 'active', 0, 0 FROM participants
                """,
                """
                INSERT INTO records (participant_pk, kind, start_ms, start_offset, value)
                  SELECT pk, 'pain', day * 86400000, 0, day FROM participants, generate_series(1, 3) AS day
                """,
                """
                INSERT INTO withdrawals (id, participant_pk, mode, at_ms, by_kind, actor, counts_json)
                  SELECT gen_random_uuid(), pk, 'stop', 0, 'staff', 'x', '{}' FROM participants WHERE code IN ('P-0002', 'P-0004')
                """,
                """
                INSERT INTO redactable_texts (digest, participant_id, salt, text_enc) VALUES
                  (repeat('1', 64), '00000000-0000-4000-8000-000000000001', '\\x00112233445566778899aabbccddeeff', '\\x01'),
                  (repeat('3', 64), '00000000-0000-4000-8000-000000000003', '\\x00112233445566778899aabbccddeeff', '\\x03'),
                  (repeat('0', 64), NULL, '\\x00112233445566778899aabbccddeeff', '\\x00')
                """,
                """
                INSERT INTO audit_events (seq, at, actor, action, subject, details, details_text, prev_hash, hash)
                  SELECT s, 'x', 'x', 'participant.enroll', NULL, '{}', '{}', repeat('0', 64), repeat('f', 64) FROM generate_series(1, 4) AS s
                """,
            ] {
                try owner.query(statement)
            }
            for site in ["site-a", "site-b"] { try SharedCluster.apply(try PostgresSiteRoles.addSiteStatements(site: site), url: url("study_owner")) }
            try SharedCluster.apply(try PostgresSiteRoles.grantStatements(site: "site-a", login: "coord_a"), url: url("study_owner"))
            try SharedCluster.apply(try PostgresSiteRoles.grantStatements(site: "site-b", login: "coord_b"), url: url("study_owner"))
            try SharedCluster.apply(try PostgresSiteRoles.grantStatements(site: nil, login: "monitor"), url: url("study_owner"))
        }

        func connect(_ role: String) throws -> PostgresConnection { try PostgresConnection(url: url(role)) }

        /// One text column of `sql`, sorted.
        func column(_ role: String, _ sql: String) throws -> [String] { try connect(role).query(sql).compactMap { $0.first ?? nil }.sorted() }

        /// The number `sql` (a count) returns for `role`.
        func count(_ role: String, _ sql: String) throws -> Int { Int(try column(role, sql).first ?? "") ?? -1 }
    }

    /// The SQLSTATE of what `body` throws; nil when it does not throw.
    static func sqlState(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            return PostgresConnection.sqlState(of: error) ?? "no SQLSTATE"
        }
    }

    @Test(.enabled(if: SharedCluster.available, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func eachSiteSeesOnlyItsParticipantsAndTheirRows() throws {
        let study = try Study()
        let codes = "SELECT code FROM participants"
        #expect(try study.column("coord_a", codes) == ["P-0001", "P-0002"])
        #expect(try study.column("coord_b", codes) == ["P-0003", "P-0004"])
        #expect(try study.column("monitor", codes) == ["P-0001", "P-0002", "P-0003", "P-0004", "P-0005"])
        #expect(try study.column("study_owner", codes).count == 5, "the owner administers and sees every row")
        // Rows hanging off a participant follow it; counted by an independent route: their participants' codes.
        let recordsBy = "SELECT DISTINCT p.code FROM records r JOIN participants p ON p.pk = r.participant_pk"
        #expect(try study.column("coord_a", "SELECT count(*) FROM records") == ["6"])
        #expect(try study.column("study_owner", recordsBy).count == 5)
        for (role, expected) in [("coord_a", ["P-0001", "P-0002"]), ("coord_b", ["P-0003", "P-0004"])] {
            // The join would hide other sites' records anyway: read records alone, then map their keys as the owner.
            let pks = try study.column(role, "SELECT DISTINCT participant_pk::text FROM records")
            let owned = try study.column("study_owner", "SELECT code FROM participants WHERE pk::text = ANY(ARRAY['\(pks.joined(separator: "','"))'])")
            #expect(owned == expected, "\(role) reads the records of exactly its site")
            #expect(try study.count(role, "SELECT count(*) FROM consents") == 2)
            #expect(try study.count(role, "SELECT count(*) FROM withdrawals") == 1)
        }
        #expect(try study.column("coord_a", "SELECT coalesce(participant_id, 'none') FROM redactable_texts")
            == ["00000000-0000-4000-8000-000000000001", "none"])
        #expect(try study.count("monitor", "SELECT count(*) FROM records") == 15)
        // The audit trail is everyone's: all four events, for every coordinator.
        for role in ["coord_a", "coord_b", "monitor"] { #expect(try study.count(role, "SELECT count(*) FROM audit_events") == 4, "\(role)") }
        #expect(Self.sqlState { _ = try study.connect("stranger").query("SELECT count(*) FROM participants") } == "42501", "no grant, no rows")
    }

    /// The role checks run once per query, not once per row: a per-participant read as a site role
    /// filters records by one hashed set of visible participants, computed with one role lookup.
    @Test(.enabled(if: SharedCluster.available, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func roleChecksRunOncePerQuery() throws {
        let study = try Study()
        let pk = try study.column("study_owner", "SELECT pk::text FROM participants WHERE code = 'P-0001'")[0]
        let plan = try study.connect("coord_a").query("EXPLAIN (COSTS OFF) SELECT * FROM records WHERE participant_pk = \(pk)")
            .compactMap { $0.first ?? nil }
        #expect(plan.contains { $0.contains("hashed SubPlan") }, "\(plan)")
        #expect(plan.contains { $0.contains("InitPlan") }, "\(plan)")
        #expect(!plan.contains { $0.contains("Filter: cohort_") }, "a role function runs per row: \(plan)")
    }

    @Test(.enabled(if: SharedCluster.available, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func aSiteCannotChangeAnotherSitesRows() throws {
        let study = try Study()
        let a = try study.connect("coord_a")
        let siteB = "(SELECT pk FROM participants WHERE code IN ('P-0003', 'P-0004'))"
        #expect(try a.command("UPDATE participants SET status = 'erased' WHERE site = 'site-b'") == 0)
        #expect(try a.command("UPDATE participants SET status = 'erased' WHERE code = 'P-0003'") == 0)
        #expect(Self.sqlState { _ = try a.command("DELETE FROM participants WHERE code = 'P-0004'") } == "42501", "no site role deletes participants")
        #expect(try a.command("UPDATE consents SET status = 'withdrawn' WHERE status = 'active'") == 2, "its own consents only")
        // Records and consents are never changed or deleted by a site role (an erase deletes through cohort_erase_records).
        #expect(Self.sqlState { _ = try a.command("UPDATE records SET value = 99") } == "42501")
        #expect(Self.sqlState { _ = try a.command("DELETE FROM consents WHERE participant_pk IN (SELECT pk FROM participants)") } == "42501")
        let bPKs = try study.column("study_owner", "SELECT pk::text FROM participants WHERE site = 'site-b'")
        #expect(Self.sqlState { _ = try a.command("DELETE FROM records WHERE participant_pk IN (\(bPKs.joined(separator: ",")))") } == "42501")
        // Nothing of site-b changed, as the owner sees it.
        #expect(try study.column("study_owner", "SELECT status FROM participants WHERE site = 'site-b'") == ["active", "active"])
        #expect(try study.count("study_owner", "SELECT count(*) FROM records WHERE participant_pk IN \(siteB) AND value <> 99") == 6)
        #expect(try study.count("study_owner", "SELECT count(*) FROM consents WHERE participant_pk IN \(siteB) AND status = 'active'") == 2)
        // Inserts for another site, or moving a participant there, are refused.
        let refusals = [
            "INSERT INTO records (participant_pk, kind, start_ms, start_offset, value) VALUES (\(bPKs[0]), 'pain', 9, 0, 1)",
            "INSERT INTO consents (id, participant_pk, version, document_sha256, signed_at_ms, signed_offset, signature_kind, sharing, status, recorded_at_ms, recorded_offset) VALUES (gen_random_uuid(), \(bPKs[0]), '1.1', repeat('a', 64), 0, 0, 'typed', 'broad', 'active', 0, 0)",
            "INSERT INTO withdrawals (id, participant_pk, mode, at_ms, by_kind, actor, counts_json) VALUES (gen_random_uuid(), \(bPKs[0]), 'erase', 0, 'staff', 'x', '{}')",
            "INSERT INTO participants (id, code, site, sex, time_zone, enrolled_on, created_at) VALUES (gen_random_uuid(), 'P-0009', 'site-b', 'male', 'UTC', '2026-02-01', 'x')",
            "INSERT INTO participants (id, code, site, sex, time_zone, enrolled_on, created_at) VALUES (gen_random_uuid(), 'P-0010', NULL, 'male', 'UTC', '2026-02-01', 'x')",
            "UPDATE participants SET site = 'site-b' WHERE code = 'P-0001'",
            "INSERT INTO redactable_texts (digest, participant_id, salt, text_enc) VALUES (repeat('9', 64), '00000000-0000-4000-8000-000000000003', '\\x00112233445566778899aabbccddeeff', '\\x09')",
        ]
        for sql in refusals { #expect(Self.sqlState { _ = try a.command(sql) } == "42501", "\(sql.prefix(40))") }
        // Its own site works.
        let aPK = try study.column("coord_a", "SELECT pk::text FROM participants WHERE code = 'P-0001'")[0]
        #expect(try a.command("INSERT INTO records (participant_pk, kind, start_ms, start_offset, value) VALUES (\(aPK), 'pain', 9, 0, 1)") == 1)
        #expect(try a.command("INSERT INTO participants (id, code, site, sex, time_zone, enrolled_on, created_at) VALUES (gen_random_uuid(), 'P-0011', 'site-a', 'male', 'UTC', '2026-02-01', 'x')") == 1)
        // The audit trail is append-only for coordinators.
        #expect(Self.sqlState { _ = try a.command("UPDATE audit_events SET action = 'x'") } == "42501")
        #expect(Self.sqlState { _ = try a.command("DELETE FROM audit_events") } == "42501")
        #expect(Self.sqlState { _ = try a.command("TRUNCATE audit_events") } == "42501")
        #expect(Self.sqlState { _ = try a.command("DELETE FROM audit_checkpoints") } == "42501")
        #expect(try study.count("study_owner", "SELECT count(*) FROM audit_events WHERE action = 'participant.enroll'") == 4)
    }

    /// A site coordinator's import: COPY FROM cannot write a table whose policies apply to the
    /// role, so its chunks go through the staging table, and the policy still refuses another
    /// site's participant (the whole file, nothing stored).
    @Test(.enabled(if: SharedCluster.available, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func aSiteCoordinatorImportsItsOwnParticipantsOnly() throws {
        let study = try Study()
        let store = try PostgresStudyStore(url: study.url("coord_a"), piiKey: Array(repeating: 7, count: 32))
        let owner = try study.connect("study_owner")
        func handle(_ code: String) throws -> ParticipantHandle {
            ParticipantHandle(rowKey: try #require(Int64(try study.column("study_owner", "SELECT pk::text FROM participants WHERE code = '\(code)'")[0])))
        }
        let mine = try handle("P-0001")
        let theirs = try handle("P-0003")
        func record(_ minute: Int64) -> CohortCore.Record {
            CohortCore.Record(
                participantID: UUID(), kind: .heartRate, start: Timestamp(epochMilliseconds: 1_767_225_600_000 + minute * 60_000), value: 60, source: "watch")
        }
        let info = ImportBatchInfo(fileName: "a.csv", fileSHA256: String(repeating: "c", count: 64), format: "csv")
        var staged = -1
        let result = try store.importBatch(info, actor: "coord_a", at: Date()) { sink in
            for minute in Int64(0)..<60_000 { try sink.add(record(minute), participant: mine) }
            try sink.flush()
            staged = (sink as? PostgresRecordSink)?.stagedChunks ?? -1
            return (60_000, sink.insertedCount, 60_000 - sink.insertedCount, 0)
        }
        #expect(result.inserted == 60_000)
        #expect(staged == 2, "both chunks through the staging table")
        #expect(try PostgresFixture.integer(owner, "SELECT count(*) FROM records WHERE participant_pk = \(mine.rowKey)") == 60_003)
        let before = try PostgresFixture.integer(owner, "SELECT count(*) FROM records")
        let refused = #expect(throws: CohortError.self) {
            try store.importBatch(info, actor: "coord_a", at: Date()) { sink in
                for minute in Int64(0)..<10 { try sink.add(record(100_000 + minute), participant: mine) }
                try sink.add(record(100_000), participant: theirs)
                try sink.flush()
                return (11, sink.insertedCount, 0, 0)
            }
        }
        #expect(refused?.cause == .sqlState("42501"), "the row-level security policy refuses another site's participant")
        #expect(try PostgresFixture.integer(owner, "SELECT count(*) FROM records") == before)
    }

    @Test(.enabled(if: SharedCluster.available, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func everyRoleOpensTheStoreAndOnlyTheOwnerAdministers() throws {
        let study = try Study()
        for role in ["coord_a", "coord_b", "monitor"] {
            let store = try PostgresStudyStore(url: study.url(role), piiKey: Array(repeating: 7, count: 32))
            #expect(store.schemaVersion == "v8-site-data-keys")
        }
        do {
            try SharedCluster.apply(try PostgresSiteRoles.addSiteStatements(site: "site-c"), url: study.url("coord_a"))
            Issue.record("a coordinator administered site roles")
        } catch let error as CohortError {
            #expect(error.code == .security)
        }
        #expect(try study.count("postgres", "SELECT count(*) FROM pg_roles WHERE rolname = 'cohort_site_site-c'") == 0)
        do {
            try SharedCluster.apply(
                try PostgresSiteRoles.grantStatements(site: "site-a", login: "nobody_zz"), url: study.owner, requiredRoles: ["cohort_site_site-a", "nobody_zz"])
            Issue.record("a grant to a missing login role was accepted")
        } catch let error as CohortError {
            #expect(error.code == .notFound)
            #expect(error.location?.field == "role")
        }
        // Adding a site twice re-grants and changes nothing else.
        try SharedCluster.apply(try PostgresSiteRoles.addSiteStatements(site: "site-a"), url: study.owner)
        #expect(try study.column("coord_a", "SELECT code FROM participants") == ["P-0001", "P-0002"])
    }
}

/// The SQL `cohort site` runs, without a server.
struct PostgresSiteRolesTests {
    @Test func siteGroupRoleNamesAreQuotedAndBounded() throws {
        #expect(try PostgresSiteRoles.groupRole(site: "site-a") == "cohort_site_site-a")
        let statements = try PostgresSiteRoles.addSiteStatements(site: "site-a")
        #expect(statements.contains { $0.contains("CREATE ROLE \"cohort_site_site-a\" NOLOGIN") })
        // The privileges come from the schema's one list (migration v6-server-audit), checked on a server by PostgresSiteAttackTests.
        #expect(statements.last == "SELECT cohort_grant_site_privileges('cohort_site_site-a')")
        #expect(throws: CohortError.self) { try PostgresSiteRoles.groupRole(site: String(repeating: "a", count: PostgresSiteRoles.maximumSiteLength + 1)) }
        #expect(throws: CohortError.self) { try PostgresSiteRoles.groupRole(site: "Site A\"; DROP TABLE records; --") }
        let grant = try PostgresSiteRoles.grantStatements(site: nil, login: "o\"brien")
        #expect(grant.last == "GRANT \"cohort_study_wide\" TO \"o\"\"brien\"")
    }
}
