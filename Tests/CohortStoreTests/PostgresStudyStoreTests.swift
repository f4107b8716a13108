import CohortCore
import CohortCrypto
import CohortPostgres
import CohortStore
import CohortStorePostgres
import Foundation
import Synchronization
import Testing

/// What only the PostgreSQL store has: a server other coordinators write to at the same time,
/// migrations recorded in a table, the audit lock, erasure as seen through SQL.
@Suite(.enabled(if: PostgresTestCluster.available, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
struct PostgresStudyStoreTests {
    static let identity = ParticipantIdentity(
        name: "Kwame Abernathy", email: "kwame.abernathy@example.org", phone: "+44 7700 900417", birthDate: CivilDate(year: 1979, month: 2, day: 11),
        address: "17 Larkspur Lane, Leeds", zip: "LS6 2QT", mrn: "MRN-55443322", devices: ["Kwame's Fitbit"])

    /// Runs `body(i)` for i in 0..<count on as many threads at once, after they all started;
    /// returns the errors thrown.
    static func concurrently(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) -> [String] {
        let errors = Mutex<[String]>([])
        let ready = DispatchGroup()
        let done = DispatchGroup()
        let start = DispatchSemaphore(value: 0)
        for i in 0..<count {
            ready.enter()
            done.enter()
            let thread = Thread {
                ready.leave()
                start.wait()
                do { try body(i) } catch { errors.withLock { $0.append("\(i): \(error)") } }
                done.leave()
            }
            thread.start()
        }
        ready.wait()
        for _ in 0..<count { start.signal() }
        done.wait()
        return errors.withLock { $0 }
    }

    @Test func aDatabaseFromANewerCohortIsRefused() throws {
        try withStoreFixture(.postgres) { fixture in
            do { _ = try fixture.open(create: true) }
            #expect(try fixture.postgres("SELECT name FROM cohort_migrations ORDER BY name").map { $0.first ?? nil } == ["v1-foundation", "v2-record-paths", "v3-site-security", "v4-bulk-records", "v5-sharing-scopes", "v6-server-audit", "v7-owner-actions", "v8-site-data-keys"])
            try fixture.postgres("INSERT INTO cohort_migrations (name) VALUES ('v99-future')")
            let error = #expect(throws: CohortError.self) { try fixture.open() }
            #expect(error?.code == .conflict)
            #expect(error?.message.contains("newer version of cohort") == true, "\(error?.message ?? "")")
            #expect(error?.hint?.contains(PostgresStudyStore.schemaVersionKnown) == true)
            #expect(error?.location?.file?.contains("@") == true, "the error names the database")
        }
    }

    @Test func aDatabaseThatIsNotACohortStudyIsNeverMigrated() throws {
        try withStoreFixture(.postgres) { fixture in
            // Empty, and not asked to create: refused, nothing created.
            let empty = #expect(throws: CohortError.self) { try fixture.open() }
            #expect(empty?.code == .integrity)
            #expect(empty?.message.contains("not a cohort study database") == true)
            #expect(try fixture.postgres("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == [["0"]])
            // Someone else's tables: refused even by `cohort init`, and left as they were.
            try fixture.postgres("CREATE TABLE notes (body text)")
            let foreign = #expect(throws: CohortError.self) { try fixture.open() }
            #expect(foreign?.code == .integrity)
            let created = #expect(throws: CohortError.self) { try fixture.open(create: true) }
            #expect(created?.code == .conflict)
            #expect(created?.message.contains("already has tables") == true)
            #expect(try fixture.postgres("SELECT string_agg(tablename, ',') FROM pg_tables WHERE schemaname = 'public'") == [["notes"]])
        }
    }

    /// What a dump of every cohort table shows, as text (bytea as hex): what an attacker with
    /// the database (pg_dump, a stolen backup restored) reads.
    static func dump(_ fixture: StoreFixture) throws -> String {
        let tables = ["study", "protocol_revisions", "templates", "participants", "consents", "withdrawals", "import_batches", "records", "audit_events",
            "audit_checkpoints", "redactable_texts"]
        let union = tables.map { "SELECT t::text AS row FROM \($0) t" }.joined(separator: " UNION ALL ")
        return try fixture.postgres("SELECT coalesce(string_agg(row, E'\\n'), '') FROM (\(union)) rows").first?.first.flatMap { $0 } ?? ""
    }

    static let needles = [
        "Kwame", "Abernathy", "kwame.abernathy@example.org", "7700 900417", "1979-02-11", "Larkspur", "LS6 2QT", "MRN-55443322", "Fitbit",
        "signed by hand", "moved to Leeds", "Dr Imani Okafor",
    ]

    @Test func identifiersAndFreeTextAreSealedInTheTables() throws {
        try withStoreFixture(.postgres) { fixture in
            let store = try fixture.open(create: true)
            let e = try enrollment(code: "P-0001", identity: Self.identity)
            try store.enroll([e], actor: "Dr Imani Okafor", source: "roster.csv", at: fixedDate)
            let p = try #require(try store.participant(code: "P-0001"))
            let consent = Consent(
                id: UUID(), participantID: e.participant.id, version: "1.0", documentSHA256: String(repeating: "a", count: 64),
                signedAt: Timestamp(epochMilliseconds: 1_741_941_000_000), signatureKind: .typed, sharing: .broad, status: .active,
                recordedAt: Timestamp(epochMilliseconds: 1_741_941_000_000))
            try store.recordConsent(consent, participant: p.handle, signatureEvidence: "signed by hand", supersede: [], actor: "Dr Imani Okafor", at: fixedDate)
            try store.withdraw(
                p.handle, participantID: e.participant.id, mode: .stop, at: Timestamp(epochMilliseconds: 1_741_941_000_000), by: "staff",
                actor: "Dr Imani Okafor", reason: "moved to Leeds", consentVersion: "1.0", receiptID: UUID())
            let dump = try Self.dump(fixture)
            #expect(dump.contains("P-0001"), "the dump is readable: the study code is stored in clear")
            for needle in Self.needles { #expect(!dump.contains(needle), "'\(needle)' is readable in the tables") }
            // …and the store reads it all back.
            #expect(try store.participant(code: "P-0001", withIdentity: true)?.participant.identity == Self.identity)
            #expect(try store.withdrawal(p.handle)?.reason == "moved to Leeds")
            #expect(try store.withdrawal(p.handle)?.actor == "Dr Imani Okafor")
            // A sealed identifier copied into another participant's row does not open there.
            try store.enroll([try enrollment(code: "P-0002", identity: ParticipantIdentity(name: "Ann Other"))], actor: "c", source: "t", at: fixedDate)
            try fixture.postgres("UPDATE participants SET name_enc = (SELECT name_enc FROM participants WHERE code = 'P-0001') WHERE code = 'P-0002'")
            let moved = #expect(throws: CohortError.self) { try store.participant(code: "P-0002", withIdentity: true) }
            #expect(moved?.code == .security, "the sealed value does not open in another row")
            #expect("\(String(describing: moved))".contains("Kwame") == false)
        }
    }

    /// Four coordinators (four connections) append 50 events each at once: one chain, numbered
    /// 1…200 without a gap, every link and hash intact, each coordinator's events in its order.
    @Test func concurrentAppendsFromFourConnectionsKeepOneChain() throws {
        try withStoreFixture(.postgres) { fixture in
            let stores = try (0..<4).map { i in try fixture.open(create: i == 0) }
            let errors = Self.concurrently(4) { i in
                for n in 1...50 {
                    try stores[i].appendEvent(
                        actor: "coordinator-\(i)", action: "test.step", subject: "c\(i)", details: ["n": String(n)],
                        redactable: n % 10 == 0 ? ["note": "typed by coordinator \(i)"] : [:], at: fixedDate)
                }
            }
            #expect(errors.isEmpty, "\(errors)")
            let events = try stores[0].auditEvents()
            #expect(events.map(\.seq) == Array(1...200))
            for i in 0..<4 {
                let mine = events.filter { $0.subject == "c\(i)" }
                #expect(mine.map { $0.details["n"] } == (1...50).map { String($0) }, "coordinator \(i)'s events in the order it appended them")
                #expect(mine.allSatisfy { $0.displayActor == "coordinator-\(i)" })
            }
            let verification = try stores[3].verifyAudit(publicKey: fixture.signingKey.publicKey)
            #expect(verification.isIntact, "\(verification.firstProblem ?? "")")
            #expect(verification.events == 200)
            #expect(verification.headSeq == 200)
            #expect(try fixture.postgres("SELECT count(DISTINCT prev_hash), count(*) FROM audit_events") == [["200", "200"]], "no two events link to one")
        }
    }

    /// An erase and an export's commit race on two connections, 20 times (the commit starting 0
    /// to 6 ms into the erase). Either the export
    /// committed first (its `export.create` precedes the erase's event) or the commit is
    /// refused naming the participant — never an `export.create` after the erase of a
    /// participant it contains.
    @Test func anEraseRacingAnExportCommitIsSeenOrComesAfter() throws {
        try withStoreFixture(.postgres) { fixture in
            let coordinator = try fixture.open(create: true)
            let exporter = try fixture.open()
            let outcomes = Mutex<[String: Int]>([:])
            for round in 1...20 {
                let e = try enrollment(code: String(format: "P-%04d", round), identity: ParticipantIdentity(name: "Person \(round)"))
                try coordinator.enroll([e], actor: "coordinator", source: "roster.csv", at: fixedDate)
                let handle = try #require(try coordinator.participant(code: e.participant.code)?.handle)
                let pid = e.participant.id
                let exportID = "export-\(round)"
                let snapshot = try exporter.appendEvent(actor: "exporter", action: "export.begin", details: ["export_id": exportID], at: fixedDate).seq
                let result = Mutex<ExportCommitResult?>(nil)
                let errors = Self.concurrently(2) { i in
                    if i == 0 {
                        try coordinator.withdraw(
                            handle, participantID: pid, mode: .erase, at: Timestamp(epochMilliseconds: 1_741_941_000_000), by: "participant",
                            actor: "coordinator", reason: nil, consentVersion: nil, receiptID: UUID())
                    } else {
                        // Rounds start the commit at different points of the erase's transaction.
                        usleep(UInt32(round % 5) * 1_500)
                        let committed = try exporter.commitExport(
                            snapshotSeq: snapshot, participantIDs: [pid], actor: "exporter", subject: "study",
                            details: ["export_id": exportID, "archive_sha256": String(repeating: "ab", count: 32)], at: fixedDate)
                        result.withLock { $0 = committed }
                    }
                }
                #expect(errors.isEmpty, "round \(round): \(errors)")
                let events = try coordinator.auditEvents(since: snapshot)
                let erase = try #require(events.first { $0.action == "participant.withdraw" && $0.subject == pid.uuidString.lowercased() })
                let creates = events.filter { $0.action == "export.create" && $0.details["export_id"] == exportID }
                switch result.withLock({ $0 }) {
                case let .committed(event)?:
                    #expect(creates.map(\.seq) == [event.seq])
                    #expect(event.seq < erase.seq, "round \(round): export.create at \(event.seq) after the erase at \(erase.seq)")
                    outcomes.withLock { $0["export first", default: 0] += 1 }
                case let .withdrawnSinceSnapshot(ids)?:
                    #expect(ids == [pid])
                    #expect(creates.isEmpty, "round \(round): refused, yet export.create was appended")
                    outcomes.withLock { $0["erase seen", default: 0] += 1 }
                case nil:
                    Issue.record("round \(round): commitExport returned nothing")
                }
            }
            print("erase vs export commit, 20 rounds: \(outcomes.withLock { $0 })")
            let verification = try exporter.verifyAudit(publicKey: fixture.signingKey.publicKey)
            #expect(verification.isIntact, "\(verification.firstProblem ?? "")")
            #expect(try exporter.auditEvents().map(\.seq) == Array(1...Int64(verification.events)))
        }
    }

    /// After an erase, the participant's identifiers, withdrawal token, signature evidence,
    /// redactable texts and records are gone from the tables — not only unreadable: their sealed
    /// bytes are nowhere in a dump — and the touched tables were vacuumed.
    @Test func anEraseLeavesNothingOfTheParticipantInTheTables() throws {
        try withStoreFixture(.postgres) { fixture in
            let store = try fixture.open(create: true)
            let e = try enrollment(code: "P-0001", identity: Self.identity)
            try store.enroll([e, try enrollment(code: "P-0002", identity: ParticipantIdentity(name: "Ann Other"))], actor: "coordinator",
                source: "roster.csv", at: fixedDate)
            let p = try #require(try store.participant(code: "P-0001"))
            let pid = e.participant.id.uuidString.lowercased()
            let consent = Consent(
                id: UUID(), participantID: e.participant.id, version: "1.0", documentSHA256: String(repeating: "a", count: 64),
                signedAt: Timestamp(epochMilliseconds: 1_741_941_000_000), signatureKind: .drawn, sharing: .broad, status: .active,
                recordedAt: Timestamp(epochMilliseconds: 1_741_941_000_000))
            try store.recordConsent(consent, participant: p.handle, signatureEvidence: "signed by hand", supersede: [], actor: "coordinator", at: fixedDate)
            // Two records of theirs and one of someone else's, written as an import would.
            try fixture.postgres(
                """
                INSERT INTO records (participant_pk, kind, start_ms, start_offset, value, source, note_enc)
                SELECT pk, 'pain', 1741941000000 + n, 3600, 3, 'app', CASE WHEN n = 1 AND code = 'P-0001' THEN '\\xdeadbeef'::bytea END
                FROM participants, generate_series(1, 2) n WHERE code IN ('P-0001', 'P-0002')
                """)
            try store.withdraw(
                p.handle, participantID: e.participant.id, mode: .exclude, at: Timestamp(epochMilliseconds: 1_741_941_000_000), by: "staff",
                actor: "coordinator", reason: "moved to Leeds", consentVersion: "1.0", receiptID: UUID())
            // The sealed bytes an attacker would look for after the erase.
            let sealed = try fixture.postgres(
                """
                SELECT encode(name_enc, 'hex'), encode(email_enc, 'hex'), encode(mrn_enc, 'hex'), encode(token_hash, 'hex'),
                    (SELECT encode(signature_enc, 'hex') FROM consents c WHERE c.participant_pk = p.pk),
                    (SELECT encode(text_enc, 'hex') FROM redactable_texts r WHERE r.participant_id = '\(pid)')
                FROM participants p WHERE code = 'P-0001'
                """).first?.compactMap { $0 } ?? []
            #expect(sealed.count == 6, "every sealed value is there before the erase")
            let before = try Self.dump(fixture)
            #expect(Self.needles.allSatisfy { !before.contains($0) })

            let counts = try store.withdraw(
                p.handle, participantID: e.participant.id, mode: .erase, at: Timestamp(epochMilliseconds: 1_741_942_000_000), by: "participant",
                actor: "coordinator", reason: "erase: moved to Leeds", consentVersion: "1.0", receiptID: UUID())
            #expect(counts == WithdrawalCounts(records: 2, consents: 1, identifiersErased: true))
            let row = try fixture.postgres(
                """
                SELECT code, status, num_nonnulls(name_enc, email_enc, phone_enc, birth_date_enc, address_enc, zip_enc, mrn_enc, devices_enc,
                    token_salt, token_hash)
                FROM participants WHERE id = '\(pid)'
                """)
            #expect(row == [["ERASED-" + pid.prefix(8), "erased", "0"]])
            #expect(try fixture.postgres("SELECT count(*) FROM records r JOIN participants p ON p.pk = r.participant_pk WHERE p.id = '\(pid)'") == [["0"]])
            #expect(try fixture.postgres("SELECT count(*) FROM records") == [["2"]], "the other participant's records stay")
            #expect(try fixture.postgres("SELECT count(signature_enc), count(*) FROM consents") == [["0", "1"]], "the consent row stays, its evidence goes")
            #expect(try fixture.postgres("SELECT count(*) FROM redactable_texts WHERE participant_id = '\(pid)'") == [["0"]])
            let dump = try Self.dump(fixture)
            for bytes in sealed { #expect(!dump.contains(bytes), "sealed bytes of the erased participant are still in a table") }
            #expect(!dump.contains("deadbeef"))
            #expect(dump.contains("ERASED-" + pid.prefix(8)))
            // The erase vacuumed the tables it touched: no dead row version is left in them.
            let vacuumed = try fixture.postgres(
                "SELECT relname, last_vacuum IS NOT NULL, n_dead_tup FROM pg_stat_user_tables WHERE relname IN ('participants', 'consents', 'records', 'redactable_texts') ORDER BY relname")
            #expect(vacuumed == [["consents", "t", "0"], ["participants", "t", "0"], ["records", "t", "0"], ["redactable_texts", "t", "0"]])
            // The chain is intact and the erased reason reads as redacted.
            #expect(try store.verifyAudit(publicKey: fixture.signingKey.publicKey).isIntact)
            #expect(try store.withdrawal(p.handle)?.reason == AuditEvent.redactedText)
        }
    }

    /// Raw edits to stored rows (constraints dropped first where the schema forbids the value),
    /// the read that must fail, and the message it must carry.
    static let corruptions: [(name: String, sql: [String], read: String, message: String)] = [
        ("unknown sex", ["ALTER TABLE participants DROP CONSTRAINT participants_sex_check", "UPDATE participants SET sex = 'zombie'"], "participants",
            "table participants, row 1, column sex: expected one of"),
        ("bad enrollment date", ["UPDATE participants SET enrolled_on = 'zombie'"], "participants",
            "table participants, row 1, column enrolled_on: expected a date"),
        ("unknown consent status", ["ALTER TABLE consents DROP CONSTRAINT consents_status_check", "UPDATE consents SET status = 'zombie'"], "consents",
            "table consents, row 1, column status: expected one of active, superseded, withdrawn"),
        ("garbled withdrawal counts", ["UPDATE withdrawals SET counts_json = 'zombie'"], "withdrawal",
            "table withdrawals, row 1, column counts_json: expected a JSON object"),
        ("no event action", ["ALTER TABLE audit_events ALTER COLUMN action DROP NOT NULL", "UPDATE audit_events SET action = NULL WHERE seq = 1"], "audit",
            "table audit_events, row 1, column action: expected text, found nothing"),
        ("garbled event details", ["UPDATE audit_events SET details_text = 'zombie' WHERE seq = 1"], "audit",
            "table audit_events, row 1, column details_text: expected a JSON object of strings"),
    ]

    @Test(arguments: corruptions)
    func corruptRowsFailNamingTableRowAndColumn(corruption: (name: String, sql: [String], read: String, message: String)) throws {
        try withStoreFixture(.postgres) { fixture in
            let store = try fixture.open(create: true)
            let e = try enrollment(code: "P-0001", identity: Self.identity)
            try store.enroll([e], actor: "coordinator", source: "roster.csv", at: fixedDate)
            let p = try #require(try store.participant(code: "P-0001"))
            let consent = Consent(
                id: UUID(), participantID: e.participant.id, version: "1.0", documentSHA256: String(repeating: "a", count: 64),
                signedAt: Timestamp(epochMilliseconds: 1_741_941_000_000), signatureKind: .typed, sharing: .broad, status: .active,
                recordedAt: Timestamp(epochMilliseconds: 1_741_941_000_000))
            try store.recordConsent(consent, participant: p.handle, signatureEvidence: nil, supersede: [], actor: "coordinator", at: fixedDate)
            try store.withdraw(
                p.handle, participantID: e.participant.id, mode: .stop, at: Timestamp(epochMilliseconds: 1_741_941_000_000), by: "staff",
                actor: "coordinator", reason: nil, consentVersion: "1.0", receiptID: UUID())
            for sql in corruption.sql { try fixture.postgres(sql) }
            let error = #expect(throws: CohortError.self, "\(corruption.name)") {
                switch corruption.read {
                case "participants": _ = try store.participants()
                case "consents": _ = try store.consentHistories()
                case "withdrawal": _ = try store.withdrawal(p.handle)
                default: _ = try store.auditEvents()
                }
            }
            #expect(error?.code == .integrity, "\(corruption.name)")
            #expect(error?.message.contains(corruption.message) == true, "\(corruption.name): \(error?.message ?? "")")
            #expect(error?.description.contains("zombie") == false, "\(corruption.name): the stored value must not be echoed")
            #expect(error?.hint?.contains("backup") == true)
            #expect(error?.location?.file == store.location, "\(corruption.name): the error names the database")
        }
    }

    /// Edits made over SQL on the live database, and the event each must be caught at. The
    /// chain has events 1…10 with signed checkpoints at 5 and 10.
    static let tamperings: [(name: String, sql: [String], seq: Int64, problem: String)] = [
        ("edit details", [#"UPDATE audit_events SET details_text = '{"rows":"9999","step":"4"}', details = '{"rows":"9999","step":"4"}' WHERE seq = 4"#], 4,
            "event 4: its content does not match its hash"),
        ("edit the searchable details only", [#"UPDATE audit_events SET details = '{"rows":"40","step":"4","export_id":"x"}' WHERE seq = 4"#], 4,
            "event 4: its searchable details differ from the details its hash commits to"),
        ("garble details", ["UPDATE audit_events SET details_text = 'not json' WHERE seq = 2"], 2, "event 2: its details are not valid JSON"),
        ("edit actor", ["UPDATE audit_events SET actor = 'someone-else' WHERE seq = 7"], 7, "event 7: its content does not match its hash"),
        ("delete a middle event", ["DELETE FROM audit_events WHERE seq = 6"], 6, "event 6 is missing (deleted?): the chain jumps from 5 to 7"),
        ("reorder two events",
            ["UPDATE audit_events SET seq = 99 WHERE seq = 3", "UPDATE audit_events SET seq = 3 WHERE seq = 4", "UPDATE audit_events SET seq = 4 WHERE seq = 99"],
            3, "event 3: its previous-hash does not link to event 2"),
        ("delete the newest events a checkpoint covers", ["DELETE FROM audit_events WHERE seq >= 9"], 10,
            "event 10 is missing: a signed checkpoint covers it (events after 8 were deleted?)"),
        ("forge a checkpoint signature", ["UPDATE audit_checkpoints SET signature = '\(Base64.encode(Array(repeating: 7, count: 64)))' WHERE seq = 5"], 5,
            "checkpoint at event 5: its signature does not verify"),
    ]

    @Test(arguments: tamperings)
    func tamperingIsCaughtAtTheRightEvent(tampering: (name: String, sql: [String], seq: Int64, problem: String)) throws {
        try withStoreFixture(.postgres) { fixture in
            let store = try fixture.open(create: true)
            for i in 1...10 {
                try store.appendEvent(actor: "coordinator", action: "test.step", subject: "subject-\(i)", details: ["step": String(i), "rows": "\(i * 10)"],
                    at: fixedDate)
                if i % 5 == 0 { try store.checkpoint(signingKey: fixture.signingKey, at: fixedDate) }
            }
            #expect(try store.verifyAudit(publicKey: fixture.signingKey.publicKey).isIntact)
            for sql in tampering.sql { try fixture.postgres(sql) }
            let verification = try store.verifyAudit(publicKey: fixture.signingKey.publicKey)
            #expect(!verification.isIntact, "\(tampering.name) was not caught")
            #expect(verification.firstProblem?.contains(tampering.problem) == true, "\(tampering.name): \(verification.firstProblem ?? "nil")")
            #expect(verification.brokenAtSeq == tampering.seq, "\(tampering.name)")
        }
    }

    @Test func aReadOnlyStoreReadsAndRefusesChanges() throws {
        try withStoreFixture(.postgres) { fixture in
            do {
                let store = try fixture.open(create: true)
                try store.enroll([try enrollment(code: "P-0001", identity: Self.identity)], actor: "coordinator", source: "roster.csv", at: fixedDate)
                try store.checkpoint(signingKey: fixture.signingKey, at: fixedDate)
            }
            let store = try fixture.open(options: .init(readOnly: true))
            #expect(store.isReadOnly)
            #expect(try store.participants().map(\.participant.code) == ["P-0001"])
            #expect(try store.verifyAudit(publicKey: fixture.signingKey.publicKey).isIntact)
            let error = #expect(throws: CohortError.self) { try store.appendEvent(actor: "x", action: "test.write", at: fixedDate) }
            #expect(error?.message.contains("read-only") == true, "\(error?.message ?? "")")
            #expect(throws: CohortError.self) { try store.purgeDeletedData() }
            #expect(try fixture.postgres("SELECT count(*) FROM audit_events") == [["1"]])
        }
    }

    /// Another coordinator holding the audit lock longer than the limit: the append gives up
    /// with a message naming the wait and the setting, and appends nothing.
    @Test func anAppendGivesUpAfterTheLockLimit() throws {
        try withStoreFixture(.postgres) { fixture in
            let store = try fixture.open(create: true, options: .init(lockTimeout: .milliseconds(600)))
            let holder = try PostgresConnection(url: fixture.databaseURL)
            try holder.query("BEGIN")
            try holder.query("SELECT cohort_lock_audit_chain()")
            let started = Date()
            let error = #expect(throws: CohortError.self) { try store.appendEvent(actor: "coordinator", action: "test.write", at: fixedDate) }
            let waited = Date().timeIntervalSince(started)
            try holder.query("ROLLBACK")
            #expect(waited >= 0.5 && waited < 5, "waited \(waited) s for a 0.6 s limit")
            #expect(error?.code == .conflict)
            #expect(error?.message.contains("for more than 0.6 s") == true, "\(error?.message ?? "")")
            #expect(error?.hint?.contains("COHORT_LOCK_TIMEOUT") == true)
            #expect(try store.auditEvents().isEmpty)
            try store.appendEvent(actor: "coordinator", action: "test.write", at: fixedDate)
            #expect(try store.auditEvents().map(\.seq) == [1])
        }
    }
}
