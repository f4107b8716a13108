import CohortCore
import CohortCrypto
import CohortStore
import Foundation
import Testing

/// The store refuses what it cannot trust: malformed rows, empty or foreign files; it waits
/// for another writer's lock; read-only commands change nothing.
struct StudyStoreIntegrityTests {
    /// Raw edits to a stored row, the read that must fail, and the message it must carry.
    static let corruptions: [(name: String, sql: String, read: String, message: String)] = [
        ("bad participant id", "UPDATE participants SET id = 'zz-not-a-uuid' WHERE pk = 1", "participants",
            "table participants, row 1, column id: expected a UUID"),
        ("unknown status", "UPDATE participants SET status = 'zombie' WHERE pk = 1", "participants",
            "table participants, row 1, column status: expected one of active, stopped, excluded, erased"),
        ("unknown sex", "UPDATE participants SET sex = 'zombie' WHERE pk = 1", "participants",
            "table participants, row 1, column sex: expected one of"),
        ("bad enrollment date", "UPDATE participants SET enrolled_on = 'zombie' WHERE pk = 1", "participants",
            "table participants, row 1, column enrolled_on: expected a date"),
        ("unknown consent status", "UPDATE consents SET status = 'zombie'", "consents",
            "table consents, row 1, column status: expected one of active, superseded, withdrawn"),
        ("unknown signature kind", "UPDATE consents SET signature_kind = 'zombie'", "consents",
            "table consents, row 1, column signature_kind: expected one of typed, drawn, wet-ink"),
        ("bad consent id", "UPDATE consents SET id = 'zombie'", "consents", "table consents, row 1, column id: expected a UUID"),
        // `records` has no rowid (clustered on its key): the fixture's one record is named by its
        // participant row.
        ("unknown record kind", "UPDATE records SET kind = 'zombie'", "records",
            "table records, row of participant 1, column kind: expected one of pain"),
        ("text where a time belongs", "UPDATE records SET start_ms = 'zombie'", "records",
            "table records, row of participant 1, column start_ms: expected an integer"),
        ("unknown withdrawal mode", "UPDATE withdrawals SET mode = 'zombie'", "withdrawal",
            "table withdrawals, row 1, column mode: expected one of stop, exclude, erase"),
        ("garbled withdrawal counts", "UPDATE withdrawals SET counts_json = 'zombie'", "withdrawal",
            "table withdrawals, row 1, column counts_json: expected a JSON object"),
        // NULL where the schema says NOT NULL (the constraint dropped from the file's schema first,
        // as a hand-edited or damaged file may have it): an error, never a default.
        ("no study code", nulling("participants", "code TEXT NOT NULL", "code"), "participants",
            "table participants, row 1, column code: expected text, found nothing"),
        ("no time zone", nulling("participants", "time_zone TEXT NOT NULL", "time_zone"), "participants",
            "table participants, row 1, column time_zone: expected text, found nothing"),
        ("no consent version", nulling("consents", "version TEXT NOT NULL", "version"), "consents",
            "table consents, row 1, column version: expected text, found nothing"),
        // (A record's participant, kind, start and source are its primary key, which SQLite keeps
        // NOT NULL whatever the schema's text says; its start offset is not.)
        ("no record start offset", nulling("records", "start_offset INTEGER NOT NULL", "start_offset"), "records",
            "table records, row of participant 1, column start_offset: expected an integer, found nothing"),
        ("no withdrawal actor", nulling("withdrawals", "actor TEXT NOT NULL", "actor"), "withdrawal",
            "table withdrawals, row 1, column actor: expected text, found nothing"),
        ("no event action", nulling("audit_events", "action TEXT NOT NULL", "action"), "audit",
            "table audit_events, row 1, column action: expected text, found nothing"),
        // A value of the wrong type.
        ("binary data where the study code belongs", "UPDATE participants SET code = x'7a6f6d626965' WHERE pk = 1", "participants",
            "table participants, row 1, column code: expected text"),
        ("text where a consent time belongs", "UPDATE consents SET signed_at_ms = 'zombie'", "consents",
            "table consents, row 1, column signed_at_ms: expected an integer"),
        ("text where sealed identifiers belong", "UPDATE participants SET name_enc = 'zombie' WHERE pk = 1", "participants",
            "table participants, row 1, column name_enc: expected binary data"),
        ("binary data where an event time belongs", "UPDATE audit_events SET at = x'7a6f6d626965' WHERE seq = 1", "audit",
            "table audit_events, row 1, column at: expected text"),
    ]

    /// SQL that drops `definition`'s NOT NULL from `table`'s schema, then (in a second session,
    /// after "--reopen") sets `column` to NULL in its first row (in every row of `records`, which
    /// has no rowid and holds one row here).
    static func nulling(_ table: String, _ definition: String, _ column: String) -> String {
        let relaxed = definition.replacingOccurrences(of: " NOT NULL", with: "")
        let row = table == "records" ? "" : " WHERE rowid = (SELECT min(rowid) FROM \(table))"
        return """
            PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = replace(sql, '\(definition)', '\(relaxed)') WHERE name = '\(table)';
            --reopen
            UPDATE \(table) SET \(column) = NULL\(row)
            """
    }

    @Test(.enabled(if: sqlite3Available, "needs the sqlite3 command-line tool"), arguments: corruptions)
    func corruptRowsFailNamingTableRowAndColumn(corruption: (name: String, sql: String, read: String, message: String)) throws {
        try withStoreFixture { fixture in
            let (pk, id): (ParticipantHandle, UUID)
            do {
                let (store, p) = try StudyStorePrivacyTests.enrolled(fixture)
                (pk, id) = (p.handle, p.participant.id)
                let consent = Consent(
                    id: UUID(), participantID: id, version: "1.0", documentSHA256: String(repeating: "a", count: 64),
                    signedAt: Timestamp(epochMilliseconds: 1_741_941_000_000), signatureKind: .typed, sharing: .broad, status: .active,
                    recordedAt: Timestamp(epochMilliseconds: 1_741_941_000_000))
                try store.recordConsent(consent, participant: pk, signatureEvidence: nil, supersede: [], actor: "coordinator", at: fixedDate)
                _ = try StudyStoreTests.importRecords(store, [StudyStorePrivacyTests.note(p.participant, minute: 0, nil)], pk: pk, file: "a.csv")
                try store.withdraw(
                    pk, participantID: id, mode: .stop, at: Timestamp(epochMilliseconds: 1_741_941_000_000), by: "staff",
                    actor: "coordinator", reason: "asked", consentVersion: "1.0", receiptID: UUID())
            }
            // A damaged or hand-edited file need not respect the schema's CHECK constraints.
            for part in corruption.sql.components(separatedBy: "--reopen\n") {
                try fixture.sqlite("PRAGMA ignore_check_constraints = ON; " + part)
            }
            let store = try fixture.open()
            let error = #expect(throws: CohortError.self, "\(corruption.name)") {
                switch corruption.read {
                case "participants": _ = try store.participants()
                case "consents": _ = try store.consentHistories()
                case "records": try store.forEachRecord(pk, participantID: id) { _ in }
                case "audit": _ = try store.auditEvents()
                default: _ = try store.withdrawal(pk)
                }
            }
            #expect(error?.code == .integrity, "\(corruption.name)")
            #expect(error?.message.contains(corruption.message) == true, "\(corruption.name): \(error?.message ?? "")")
            #expect(error?.description.contains("zombie") == false, "\(corruption.name): the stored value must not be echoed")
            #expect(error?.hint?.contains("backup") == true)
            #expect(error?.location?.file == fixture.url.path, "\(corruption.name): the error names the database file")
        }
    }

    @Test func anEmptyFileIsNeverMigrated() throws {
        try withStoreFixture { fixture in
            _ = try fixture.open(create: true)
            try Data().write(to: fixture.url)
            try? FileManager.default.removeItem(atPath: fixture.url.path + "-wal")
            try? FileManager.default.removeItem(atPath: fixture.url.path + "-shm")
            let error = #expect(throws: CohortError.self) { try fixture.open() }
            #expect(error?.code == .integrity)
            #expect(error?.message.contains("empty file (0 bytes)") == true)
            #expect(error?.hint?.contains("cohort init") == true)
            #expect(try FileManager.default.attributesOfItem(atPath: fixture.url.path)[.size] as? NSNumber == 0, "nothing was written into it")
            let readOnly = #expect(throws: CohortError.self) { try fixture.open(options: .init(readOnly: true)) }
            #expect(readOnly?.code == .integrity)
        }
    }

    @Test(.enabled(if: sqlite3Available, "needs the sqlite3 command-line tool"))
    func aForeignDatabaseIsNeverMigrated() throws {
        try withStoreFixture { fixture in
            try fixture.sqlite("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('hello')")
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: fixture.url.path)
            let error = #expect(throws: CohortError.self) { try fixture.open() }
            #expect(error?.code == .integrity)
            #expect(error?.message.contains("not a cohort study database") == true)
            #expect(try fixture.sqlite("SELECT group_concat(name) FROM sqlite_master") == "notes", "no cohort table was added")
        }
    }

    @Test func aFileThatIsNotSQLiteIsAnIntegrityError() throws {
        try withStoreFixture { fixture in
            try Data(repeating: 0x41, count: 8192).write(to: fixture.url)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: fixture.url.path)
            let error = #expect(throws: CohortError.self) { try fixture.open() }
            #expect(error?.code == .integrity)
        }
    }

    /// Holds the database's write lock from another process (the stock sqlite3 tool) for
    /// `seconds`; returns once the lock is taken.
    static func holdWriteLock(_ fixture: StoreFixture, seconds: Double) throws -> Process {
        let marker = fixture.directory.appendingPathComponent("locked-\(UUID().uuidString)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: sqlite3Path)
        process.arguments = [fixture.url.path, "BEGIN IMMEDIATE;", ".shell touch \(marker.path)", ".shell sleep \(seconds)", "COMMIT;"]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: marker.path), Date() < deadline { usleep(10_000) }
        return process
    }

    @Test(.enabled(if: sqlite3Available, "needs the sqlite3 command-line tool"))
    func aSecondWriterWaitsAndSaysSo() throws {
        try withStoreFixture { fixture in
            _ = try fixture.open(create: true)
            let holder = try Self.holdWriteLock(fixture, seconds: 1.8)
            let notices = Counter()
            let store = try fixture.open(options: .init(lockTimeout: .seconds(20), onWaiting: { notices.increment() }))
            let started = Date()
            try store.appendEvent(actor: "coordinator", action: "test.write", at: fixedDate)
            let waited = Date().timeIntervalSince(started)
            holder.waitUntilExit()
            #expect(waited >= 1.0, "the write went through while the lock was held (\(waited) s)")
            #expect(notices.value == 1, "the wait is announced once after a second")
            #expect(try store.auditEvents().count == 1)
        }
    }

    @Test(.enabled(if: sqlite3Available, "needs the sqlite3 command-line tool"))
    func aWriterGivesUpAfterTheLimitNamingTheLock() throws {
        try withStoreFixture { fixture in
            let store = try fixture.open(create: true, options: .init(lockTimeout: .milliseconds(600)))
            let holder = try Self.holdWriteLock(fixture, seconds: 3)
            defer { holder.waitUntilExit() }
            let started = Date()
            let error = #expect(throws: CohortError.self) { try store.appendEvent(actor: "coordinator", action: "test.write", at: fixedDate) }
            let waited = Date().timeIntervalSince(started)
            #expect(waited >= 0.5 && waited < 2.5, "waited \(waited) s for a 0.6 s limit")
            #expect(error?.code == .conflict)
            #expect(error?.message.contains("another cohort command has held the study database's write lock for more than 0.6 s") == true,
                "\(error?.message ?? "")")
            #expect(error?.hint?.contains("COHORT_LOCK_TIMEOUT") == true)
            #expect(error?.description.contains("SQLite error 5") == false)
        }
    }

    /// A stored protocol changed behind cohort's back — one byte of its canonical JSON, still
    /// valid JSON — is an integrity error on the next read, in both stores: the JSON is re-hashed
    /// against the SHA-256 it is pinned by (computed here independently, with `sha256sum`'s
    /// algorithm over the loaded file's canonical JSON).
    @Test(.enabled(if: sqlite3Available, "needs the sqlite3 command-line tool"), arguments: StoreKind.tested)
    func aChangedStoredProtocolIsAnIntegrityErrorOnRead(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let loaded = try ProtocolLoader.load(contentsOf: repositoryRoot.appendingPathComponent("protocols/minimal.yaml"))
            do {
                let store = try fixture.open(create: true)
                let pinned = try store.pinProtocol(loaded, templates: [:], actor: "coordinator", at: fixedDate)
                #expect(pinned.sha256 == SHA256.hex(try loaded.canonicalJSON()))
                #expect(try store.currentProtocol()?.sha256 == pinned.sha256, "an untouched protocol reads")
            }
            switch kind {
            case .sqlite: try fixture.sqlite("UPDATE protocol_revisions SET canonical_json = CAST(canonical_json || ' ' AS BLOB) WHERE is_current = 1")
            case .postgres: try fixture.postgres("UPDATE protocol_revisions SET canonical_json = canonical_json || '\\x20'::bytea WHERE is_current")
            }
            let error = #expect(throws: CohortError.self) { try fixture.open().currentProtocol() }
            #expect(error?.code == .integrity, "\(String(describing: error))")
            #expect(error?.location?.field == "protocol_revisions.canonical_json")
        }
    }

    @Test(arguments: [("", 600_000), ("abc", nil), ("-1", nil), ("2.5", 2500), ("0", 0)] as [(String, Int?)])
    func statementTimeoutComesFromTheEnvironment(text: String, milliseconds: Int?) throws {
        let environment = text.isEmpty ? [:] : ["COHORT_STATEMENT_TIMEOUT": text]
        if let milliseconds {
            #expect(try StoreOpenOptions.statementTimeout(environment: environment) == (milliseconds == 0 ? nil : .milliseconds(milliseconds)))
        } else {
            let error = #expect(throws: CohortError.self) { try StoreOpenOptions.statementTimeout(environment: environment) }
            #expect(error?.location?.field == "COHORT_STATEMENT_TIMEOUT")
        }
    }

    @Test(arguments: [("", nil), ("abc", nil), ("-1", nil), ("2.5", 2500), ("0", 0)] as [(String, Int?)])
    func lockTimeoutComesFromTheEnvironment(text: String, milliseconds: Int?) throws {
        if text.isEmpty {
            #expect(try StoreOpenOptions.lockTimeout(environment: [:]) == .seconds(60))
        } else if let milliseconds {
            #expect(try StoreOpenOptions.lockTimeout(environment: ["COHORT_LOCK_TIMEOUT": text]) == .milliseconds(milliseconds))
        } else {
            let error = #expect(throws: CohortError.self) { try StoreOpenOptions.lockTimeout(environment: ["COHORT_LOCK_TIMEOUT": text]) }
            #expect(error?.location?.field == "COHORT_LOCK_TIMEOUT")
        }
    }

    /// A read-only copy (`chmod a-w`, no write-ahead log beside it) opens, reads, and refuses
    /// writes; its bytes do not change and no -wal/-shm file appears.
    @Test func aReadOnlyCopyIsReadAndLeftUnchanged() throws {
        try withStoreFixture { fixture in
            do {
                let (store, _) = try StudyStorePrivacyTests.enrolled(fixture)
                try store.checkpoint(signingKey: fixture.signingKey, at: fixedDate)
            }
            try? FileManager.default.removeItem(atPath: fixture.url.path + "-wal")
            try? FileManager.default.removeItem(atPath: fixture.url.path + "-shm")
            try FileManager.default.setAttributes([.posixPermissions: 0o400], ofItemAtPath: fixture.url.path)
            defer { try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: fixture.url.path) }
            let before = try Data(contentsOf: fixture.url)
            do {
                let store = try fixture.open(options: .init(readOnly: true))
                #expect(store.isReadOnly)
                #expect(try store.participants().map(\.participant.code) == ["P-0001"])
                #expect(try store.verifyAudit(publicKey: fixture.signingKey.publicKey).isIntact)
                let error = #expect(throws: CohortError.self) { try store.appendEvent(actor: "x", action: "test.write", at: fixedDate) }
                #expect(error?.message.contains("read-only") == true, "\(error?.message ?? "")")
            }
            #expect(try Data(contentsOf: fixture.url) == before)
            #expect(!FileManager.default.fileExists(atPath: fixture.url.path + "-wal"))
            #expect(!FileManager.default.fileExists(atPath: fixture.url.path + "-shm"))
        }
    }
}
