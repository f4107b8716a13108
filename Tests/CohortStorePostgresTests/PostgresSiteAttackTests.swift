import CohortCore
import CohortCrypto
import CohortPostgres
import CohortStore
import CohortStorePostgres
import Foundation
import Testing

/// Issue #30's attacks, run as a hostile site coordinator would: with SQL through libpq as the
/// site's login role (what psql would send), and through cohort's store as that role. Each test
/// expects the attack to be refused by the server (SQLSTATE 42501 and friends) or detected, and
/// checks afterwards, as the owner, that nothing of the study changed.
///
/// Roles: `study_owner` (owns the tables, CREATEROLE, not a superuser), `coord_a` (site-a),
/// `coord_b` (site-b), `monitor` (study-wide). Against the schema before migration
/// `v6-server-audit` every test here fails (see docs/multi-site.md).
@Suite(.serialized)
struct PostgresSiteAttackTests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let enabled = SharedCluster.available
    static let piiKey: [UInt8] = Array(repeating: 7, count: 32)

    /// A two-site study: the protocol pinned by the owner, participant A1 at site-a and B1 at
    /// site-b, one consent each, a few audit events (actors sealed as redactable texts) and a
    /// signed checkpoint.
    struct Study {
        let url: @Sendable (String) -> String
        let signingKey: Ed25519PrivateKey
        let b1: String

        init() throws {
            let (url, name) = try SharedCluster.newDatabase()
            self.url = url
            let admin = try PostgresConnection(url: url("postgres"))
            for (role, options) in [("study_owner", "LOGIN CREATEROLE"), ("coord_a", "LOGIN"), ("coord_b", "LOGIN"), ("monitor", "LOGIN"), ("stranger", "LOGIN")] {
                _ = try SharedCluster.roles.withLock {
                    try admin.query("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '\(role)') THEN CREATE ROLE \(role) \(options); END IF; END $$")
                }
            }
            try admin.query("ALTER DATABASE \(name) OWNER TO study_owner")
            let owner = try PostgresStudyStore(url: url("study_owner"), piiKey: PostgresSiteAttackTests.piiKey, create: true)
            let loaded = try ProtocolLoader.load(contentsOf: PostgresSiteAttackTests.repositoryRoot.appendingPathComponent("protocols/axspa-wearables.yaml"))
            try owner.pinProtocol(loaded, templates: [:], actor: "Owner", at: Date())
            let sql = try PostgresConnection(url: url("study_owner"))
            try sql.query(
                """
                INSERT INTO participants (id, code, site, sex, time_zone, enrolled_on, created_at) VALUES
                  ('00000000-0000-4000-8000-0000000000a1', 'A-0001', 'site-a', 'female', 'Europe/Berlin', '2026-02-01', 'x'),
                  ('00000000-0000-4000-8000-0000000000b1', 'B-0001', 'site-b', 'male', 'Europe/Paris', '2026-02-01', 'x')
                """)
            b1 = "00000000-0000-4000-8000-0000000000b1"
            for id in ["00000000-0000-4000-8000-0000000000a1", b1] {
                try owner.appendEvent(AuditEntry(actor: "Owner", action: "participant.enroll", subject: id, details: ["source": "test"]), at: Date())
            }
            signingKey = try Ed25519PrivateKey.generate()
            try owner.checkpoint(signingKey: signingKey, at: Date())
            for site in ["site-a", "site-b"] { try SharedCluster.apply(try PostgresSiteRoles.addSiteStatements(site: site), url: url("study_owner")) }
            try SharedCluster.apply(try PostgresSiteRoles.grantStatements(site: "site-a", login: "coord_a"), url: url("study_owner"))
            try SharedCluster.apply(try PostgresSiteRoles.grantStatements(site: "site-b", login: "coord_b"), url: url("study_owner"))
            try SharedCluster.apply(try PostgresSiteRoles.grantStatements(site: nil, login: "monitor"), url: url("study_owner"))
        }

        func connect(_ role: String) throws -> PostgresConnection { try PostgresConnection(url: url(role)) }

        /// The store as `role`'s workspace opens it (`lockWait`: how long it waits for a lock).
        func store(_ role: String, lockWait: Duration = .seconds(60)) throws -> PostgresStudyStore {
            try PostgresStudyStore(url: url(role), piiKey: PostgresSiteAttackTests.piiKey, options: StoreOpenOptions(lockTimeout: lockWait))
        }

        /// The first column of the first row of `sql` as the owner.
        func value(_ sql: String) throws -> String? { try connect("study_owner").query(sql).first?.first ?? nil }

        /// The whole chain as the owner sees it, recomputed (the study's key checks the checkpoints).
        func verification() throws -> AuditVerification { try store("study_owner").verifyAudit(publicKey: signingKey.publicKey) }
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

    // MARK: The study's definition

    /// "Any site rewrites the study's de-identification policy without trace": the UPDATE is
    /// refused, and so is every other write to the study-wide tables.
    @Test(.enabled(if: enabled, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func aSiteCannotRewriteTheProtocolOrTheStudy() throws {
        let study = try Study()
        let pinned = try #require(try study.value("SELECT sha256 FROM protocol_revisions WHERE is_current"))
        let before = try study.value("SELECT md5(canonical_json) FROM protocol_revisions")
        let a = try study.connect("coord_a")
        let attacks = [
            "UPDATE protocol_revisions SET canonical_json = convert_to(replace(convert_from(canonical_json, 'UTF8'), '\"k\":5', '\"k\":1'), 'UTF8')",
            "UPDATE protocol_revisions SET is_current = false",
            "INSERT INTO protocol_revisions (sha256, study_id, revision, canonical_json, loaded_at) VALUES (repeat('e', 64), 'x', 99, '\\x7b7d', 'x')",
            "DELETE FROM protocol_revisions",
            "INSERT INTO templates (protocol_sha256, path, sha256, content) VALUES ('\(pinned)', 'x.md', repeat('0', 64), '\\x00')",
            "UPDATE study SET study_id = 'other'",
            "UPDATE import_batches SET file_sha256 = repeat('0', 64)",
        ]
        for sql in attacks { #expect(Self.sqlState { _ = try a.command(sql) } == "42501", "\(sql.prefix(50))") }
        #expect(try study.value("SELECT md5(canonical_json) FROM protocol_revisions") == before)
        #expect(try study.store("coord_b").currentProtocol()?.sha256 == pinned)
    }

    /// What the owner (or anyone with the table owner's or a superuser's rights) changes in the
    /// stored protocol is detected on every read: the JSON is re-hashed against its pinned SHA-256.
    @Test(.enabled(if: enabled, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func aRewrittenProtocolIsDetectedOnRead() throws {
        let study = try Study()
        try study.connect("postgres").query(
            "UPDATE protocol_revisions SET canonical_json = canonical_json || convert_to(' ', 'UTF8') WHERE is_current")
        for role in ["coord_b", "study_owner"] {
            let error = #expect(throws: CohortError.self) { try study.store(role).currentProtocol() }
            #expect(error?.code == .integrity, "\(role): \(String(describing: error))")
        }
    }

    // MARK: The audit trail

    /// "Any site forges another site's history" and "one row at seq 1000000", "one junk
    /// checkpoint": no site role can write the audit tables; the chain and every checkpoint stay
    /// verifiable for everyone, and the next event follows the real head.
    @Test(.enabled(if: enabled, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func aSiteCannotWriteTheAuditTablesDirectly() throws {
        let study = try Study()
        let a = try study.connect("coord_a")
        let head = try #require(try study.store("study_owner").auditHead())
        // A correctly chained forged erase of B's participant, as AuditChain would compute it.
        let forged = try AuditChain.next(
            after: head, at: "2026-03-01T00:00:00.000Z", actor: "coord_b", action: "participant.withdraw", subject: study.b1,
            details: ["mode": "erase", "by": "participant"])
        let insertEvent = "INSERT INTO audit_events (seq, at, actor, action, subject, details, details_text, prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $6, $7, $8)"
        let detailsJSON = try AuditChain.detailsJSON(forged.details)
        func insert(seq: Int64) throws {
            try a.command(
                insertEvent,
                values: [
                    .int(seq), .text(forged.at), .text(forged.actor), .text(forged.action), .optional(forged.subject), .text(detailsJSON),
                    .text(forged.prevHash), .text(forged.hash),
                ])
        }
        #expect(Self.sqlState { try insert(seq: forged.seq) } == "42501", "a forged, correctly chained event")
        #expect(Self.sqlState { try insert(seq: 1_000_000) } == "42501", "an event far ahead of the head")
        #expect(
            Self.sqlState {
                _ = try a.command("INSERT INTO audit_checkpoints (seq, head_hash, signature, at) VALUES ($1, repeat('0', 64), 'junk', 'x')", values: [.int(head.seq)])
            } == "42501", "a junk checkpoint")
        #expect(Self.sqlState { _ = try a.command("UPDATE audit_checkpoints SET signature = 'junk'") } == "42501")
        #expect(Self.sqlState { _ = try a.command("DELETE FROM audit_events WHERE seq = 1") } == "42501")
        // Nothing was written; the chain verifies and the next event follows the real head.
        let verification = try study.verification()
        #expect(verification.firstProblem == nil && verification.headSeq == head.seq, "\(String(describing: verification.firstProblem))")
        let next = try study.store("coord_b").appendEvent(AuditEntry(actor: "Bob", action: "participant.note", subject: nil, details: [:]), at: Date())
        #expect(next.seq == head.seq + 1 && next.prevHash == head.hash)
        #expect(try study.verification().firstProblem == nil)
    }

    /// "Site A registers its own signing key (or another site's)": the events that say which keys
    /// are the study's (`keys.create`, `keys.check`, `site.key_registered`) are refused from every
    /// role but the owner (migration `v7-owner-actions`), through the function, through the store
    /// and as the study-wide role; the owner's go through.
    @Test(.enabled(if: enabled, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func onlyTheOwnerRecordsTheStudysKeys() throws {
        let study = try Study()
        let head = try #require(try study.store("study_owner").auditHead())
        for role in ["coord_a", "monitor"] {
            let conn = try study.connect(role)
            for action in ["site.key_registered", "keys.create", "keys.check", "site.key_revoked"] {
                #expect(
                    Self.sqlState {
                        _ = try conn.query(
                            "SELECT * FROM cohort_append_event('2026-03-01T00:00:00.000Z', 'x', $1, NULL, '{\"site\":\"site-a\"}'::jsonb)", [action])
                    } == "42501", "\(role) \(action)")
            }
            let viaStore = #expect(throws: CohortError.self) {
                try study.store(role).appendEvent(
                    AuditEntry(actor: "Alice", action: "site.key_registered", subject: nil, details: ["site": "site-b"]), at: Date())
            }
            #expect(viaStore?.code == .security, "\(role): \(String(describing: viaStore))")
        }
        #expect(try study.store("study_owner").auditHead()?.seq == head.seq, "nothing was appended")
        // A site's ordinary events still go through; the owner's registration too.
        _ = try study.store("coord_a").appendEvent(AuditEntry(actor: "Alice", action: "participant.note", subject: nil, details: [:]), at: Date())
        let registered = try study.store("study_owner").appendEvent(
            AuditEntry(actor: "Owner", action: "site.key_registered", subject: nil, details: ["site": "site-a"]), at: Date())
        #expect(registered.seq == head.seq + 2)
        #expect(try study.verification().firstProblem == nil)
    }

    /// "Site A wraps a data key of its own for site B" (or rewraps, or deletes B's): only the
    /// owner writes `site_data_keys` (migration `v8-site-data-keys`), and row security shows a
    /// site role its own site's `site:` wraps only, the study-wide role the `study` wraps only.
    @Test(.enabled(if: enabled, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func onlyTheOwnerWritesSiteDataKeys() throws {
        let study = try Study()
        let owner = try study.connect("study_owner")
        for (site, holder) in [("site-a", "study"), ("site-a", "site:a"), ("site-b", "study"), ("site-b", "site:b")] {
            _ = try owner.query("INSERT INTO site_data_keys (site, holder, wrapped) VALUES ($1, $2, '\\x00')", [site, holder])
        }
        for role in ["coord_a", "monitor"] {
            let conn = try study.connect(role)
            for statement in [
                "INSERT INTO site_data_keys (site, holder, wrapped) VALUES ('site-b', 'site:x', '\\x01')",
                "UPDATE site_data_keys SET wrapped = '\\x01'", "DELETE FROM site_data_keys", "TRUNCATE site_data_keys",
            ] {
                #expect(Self.sqlState { _ = try conn.query(statement) } == "42501", "\(role): \(statement)")
            }
        }
        let seenByA = try study.connect("coord_a").query("SELECT site || ' ' || holder FROM site_data_keys ORDER BY 1").map { $0.first ?? nil }
        #expect(seenByA == ["site-a site:a"])
        let seenByMonitor = try study.connect("monitor").query("SELECT site || ' ' || holder FROM site_data_keys ORDER BY 1").map { $0.first ?? nil }
        #expect(seenByMonitor == ["site-a study", "site-b study"])
        #expect(try owner.query("SELECT count(*) FROM site_data_keys").first?.first == "4")
    }

    /// Events are appended by the server (`cohort_append_event`): it numbers and links them and
    /// stamps the login role that appended (`details.db_role`); the actor a coordinator types is
    /// a display note. The server's hash is recomputed here by an independent route (AuditEvent's
    /// canonical encoding in Swift) over texts that need every JSON escape.
    @Test(.enabled(if: enabled, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func theServerNumbersLinksAndStampsEachEvent() throws {
        let study = try Study()
        let a = try study.store("coord_a")
        let tricky = "quote \" backslash \\ slash / tab \t nl \n cr \r bell \u{07} del \u{7F} é € 😀 \u{2028}"
        let event = try a.appendEvent(
            AuditEntry(actor: "coord_b", action: "participant.note", subject: study.b1, details: ["note": tricky, "a_b": "1", "aB": "2", "a10": "3", "a2": "4"]),
            at: Date())
        #expect(event.details["db_role"] == "coord_a", "the server stamps the login role, whatever actor was typed")
        let stored = try #require(try study.store("study_owner").auditEvents(since: event.seq, limit: 1, revealing: true).first)
        #expect(stored.details == event.details && stored.hash == event.hash && stored.displayActor == "coord_b")
        let recomputed = SHA256.hex(
            try AuditEvent.hashInput(
                seq: stored.seq, at: stored.at, actor: stored.actor, action: stored.action, subject: stored.subject, details: stored.details,
                prevHash: stored.prevHash))
        #expect(recomputed == stored.hash)
        #expect(try study.verification().firstProblem == nil)
        // The function refuses what the chain must not hold: a details key the server owns, a
        // value that is not text, an instant or action in another form.
        let conn = try study.connect("coord_a")
        let calls: [(String, String)] = [
            ("{\"db_role\":\"coord_b\"}", "participant.note"), ("{\"n\":1}", "participant.note"), ("{}", "Participant Note; --"),
        ]
        for (details, action) in calls {
            let state = Self.sqlState {
                _ = try conn.query("SELECT * FROM cohort_append_event($1, $2, $3, NULL, $4::jsonb)", ["2026-03-01T00:00:00.000Z", "x", action, details])
            }
            #expect(state == "22023", "\(details) \(action): \(String(describing: state))")
        }
        #expect(Self.sqlState { _ = try conn.query("SELECT * FROM cohort_append_event('yesterday', 'x', 'participant.note', NULL, '{}')") } == "22023")
        #expect(try study.verification().firstProblem == nil)
    }

    /// "Any site erases who did what": texts about no participant (actor names) cannot be
    /// deleted or changed by a site; a site's erase still deletes its participant's texts.
    @Test(.enabled(if: enabled, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func aSiteCannotEraseWhoDidWhat() throws {
        let study = try Study()
        let shared = try study.value("SELECT count(*) FROM redactable_texts WHERE participant_id IS NULL")
        #expect(shared != "0")
        let a = try study.connect("coord_a")
        for sql in [
            "DELETE FROM redactable_texts WHERE participant_id IS NULL", "UPDATE redactable_texts SET text_enc = '\\x00'",
            "TRUNCATE redactable_texts",
        ] {
            let state = Self.sqlState { _ = try a.command(sql) }
            #expect(state == "42501", "\(sql): \(String(describing: state))")
        }
        #expect(try study.value("SELECT count(*) FROM redactable_texts WHERE participant_id IS NULL") == shared)
        let events = try study.store("coord_b").auditEvents(since: 1, limit: nil, revealing: true)
        #expect(events.allSatisfy { $0.displayActor == "Owner" }, "every actor still reads as written")
    }

    // MARK: Availability

    /// "Any site stalls the others": a site role has no privilege that takes a lock stronger
    /// than an insert's on any table (column-level UPDATE grants, deletes through the erase
    /// function), so `LOCK TABLE` in a blocking mode is refused.
    @Test(.enabled(if: enabled, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func aSiteCannotLockATable() throws {
        let study = try Study()
        let a = try study.connect("coord_a")
        let tables = [
            "participants", "consents", "withdrawals", "records", "redactable_texts", "audit_events", "audit_checkpoints", "protocol_revisions",
            "templates", "import_batches", "study",
        ]
        for table in tables {
            for mode in ["ACCESS EXCLUSIVE", "EXCLUSIVE", "SHARE"] {
                let state = Self.sqlState { try a.transaction { _ = try a.query("LOCK TABLE \(table) IN \(mode) MODE") } }
                #expect(state == "42501", "LOCK TABLE \(table) IN \(mode) MODE: \(String(describing: state))")
            }
        }
        #expect(Self.sqlState { _ = try a.command("DELETE FROM records") } == "42501", "records are deleted only by an erase")
    }

    /// "…or holding the audit advisory lock": the chain's lock is no advisory lock any role can
    /// take; a site holding the old one in an open transaction does not delay another site's
    /// append (which waits at most 3 s here, and would fail after that).
    @Test(.enabled(if: enabled, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func holdingAnAdvisoryLockStallsNoOne() throws {
        let study = try Study()
        let a = try study.connect("coord_a")
        try a.query("BEGIN")
        for key in [Int64(0x636F_686F_7274_0001), 0x636F_686F_7274_0000] { try a.query("SELECT pg_advisory_xact_lock($1)", values: [.int(key)]) }
        try a.query("SELECT pg_advisory_lock($1)", values: [.int(0x636F_686F_7274_0001)])
        defer { _ = try? a.query("ROLLBACK") }
        let b = try study.store("coord_b", lockWait: .seconds(3))
        let event = try b.appendEvent(AuditEntry(actor: "Bob", action: "participant.note", subject: nil, details: [:]), at: Date())
        #expect(event.seq > 0)
        #expect(try b.checkpoint(signingKey: study.signingKey, at: Date())?.seq == event.seq)
    }
}

extension PostgresSiteAttackTests {
    /// A site that appends an event in psql and leaves its transaction open holds the chain's
    /// lock; the server ends that session after 10 s idle, and the other site's append, which
    /// waits up to 30 s here, goes through. The hostile session's event is rolled back.
    @Test(.enabled(if: enabled, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func aSiteIdlingWithTheChainsLockLosesItsSession() throws {
        let study = try Study()
        let a = try study.connect("coord_a")
        let head = try #require(try study.store("study_owner").auditHead())
        try a.query("BEGIN")
        _ = try a.query("SELECT * FROM cohort_append_event('2026-03-01T00:00:00.000Z', 'x', 'participant.note', NULL, '{}')")
        let started = Date()
        let event = try study.store("coord_b", lockWait: .seconds(30)).appendEvent(
            AuditEntry(actor: "Bob", action: "participant.note", subject: nil, details: [:]), at: Date())
        let waited = Date().timeIntervalSince(started)
        #expect(waited > 5 && waited < 25, "waited \(waited) s")
        #expect(event.seq == head.seq + 1, "the idle session's append was rolled back")
        #expect(Self.sqlState { _ = try a.query("SELECT 1") } != nil, "the idle session was ended")
        #expect(try study.verification().firstProblem == nil)
    }

    /// A site can still store, through the server's function, a well-formed signature that does
    /// not verify for the head (the server cannot check Ed25519). It is detected and attributed:
    /// `audit verify` names the login role that stored it, and no workspace hands it on as the
    /// head's checkpoint (an integrity error instead of a manifest carrying it).
    @Test(.enabled(if: enabled, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func aJunkCheckpointIsDetectedAndAttributed() throws {
        let study = try Study()
        let b = try study.store("coord_b")
        let event = try b.appendEvent(AuditEntry(actor: "Bob", action: "participant.note", subject: nil, details: [:]), at: Date())
        let junk = Base64.encode(try SecureRandom.bytes(64))
        try study.connect("coord_a").query(
            "SELECT cohort_append_checkpoint($1, $2, '2026-03-01T00:00:00.000Z')", values: [.int(event.seq), .text(junk)])
        #expect(try study.value("SELECT written_by FROM audit_checkpoints WHERE seq = \(event.seq)") == "coord_a")
        let problem = try study.verification().firstProblem
        #expect(problem?.contains("does not verify") == true && problem?.contains("coord_a") == true, "\(problem ?? "intact")")
        let error = #expect(throws: CohortError.self) { try b.checkpoint(signingKey: study.signingKey, at: Date()) }
        #expect(error?.code == .integrity)
        // The owner removes it after review; the chain verifies again and B signs the head.
        try study.connect("study_owner").query("DELETE FROM audit_checkpoints WHERE seq = $1", values: [.int(event.seq)])
        #expect(try b.checkpoint(signingKey: study.signingKey, at: Date())?.seq == event.seq)
        #expect(try study.verification().firstProblem == nil)
    }

    /// A site coordinator's `cohort protocol load` (the store's pin) is refused by the server,
    /// and the message says it is a privilege this role lacks — not "undefined table or column".
    @Test(.enabled(if: enabled, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func aSitePinningAProtocolReadsAMissingPrivilege() throws {
        let study = try Study()
        var loaded = try ProtocolLoader.load(contentsOf: Self.repositoryRoot.appendingPathComponent("protocols/axspa-wearables.yaml"))
        loaded.studyProtocol.revision += 1
        let error = #expect(throws: CohortError.self) { try study.store("coord_a").pinProtocol(loaded, templates: [:], actor: "Alice", at: Date()) }
        #expect(error?.code == .security, "\(String(describing: error))")
        #expect(error?.message.contains("lacks the privilege") == true)
        #expect(error?.message.contains("undefined table") == false)
        #expect(error?.cause == .sqlState("42501"))
    }
}

extension PostgresSiteAttackTests {
    /// A study upgraded from v5 keeps no v5 privilege: the migration (and `cohort site add` run
    /// again) revokes everything and grants the one list. Simulated here by granting a site group
    /// v5's privileges, then applying `site add`; checked by the server's own privilege functions.
    @Test(.enabled(if: enabled, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func anUpgradedSiteRoleKeepsNoOldPrivilege() throws {
        let study = try Study()
        let owner = try study.connect("study_owner")
        for v5 in [
            "GRANT SELECT, INSERT, UPDATE, DELETE ON participants, consents, withdrawals, records, redactable_texts TO \"cohort_site_site-a\"",
            "GRANT SELECT, INSERT, UPDATE ON protocol_revisions, import_batches TO \"cohort_site_site-a\"",
            "GRANT SELECT, INSERT ON audit_events, audit_checkpoints, templates TO \"cohort_site_site-a\"",
        ] {
            try owner.query(v5)
        }
        try SharedCluster.apply(try PostgresSiteRoles.addSiteStatements(site: "site-a"), url: study.url("study_owner"))
        let privileges = try owner.query(
            """
            SELECT t || ':' || p FROM unnest(ARRAY['participants', 'consents', 'withdrawals', 'records', 'redactable_texts', 'import_batches',
                'audit_events', 'audit_checkpoints', 'protocol_revisions', 'templates', 'study']) AS t,
              unnest(ARRAY['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) AS p
            WHERE has_table_privilege('coord_a', t, p)
            ORDER BY 1
            """
        ).compactMap { $0.first ?? nil }
        #expect(
            privileges == [
                "consents:INSERT", "import_batches:INSERT", "participants:INSERT", "records:INSERT", "redactable_texts:INSERT", "withdrawals:INSERT",
            ], "table-level writes coord_a holds: \(privileges)")
        let columns = try owner.query(
            "SELECT count(*) FROM information_schema.column_privileges WHERE grantee = 'cohort_site_site-a' AND privilege_type = 'UPDATE'")
        #expect(columns.first?.first == "21", "UPDATE on named columns only: 14 of participants, 2 of consents, 5 of import_batches")
    }
}
