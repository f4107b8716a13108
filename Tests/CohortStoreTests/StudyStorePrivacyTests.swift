import CohortCore
import CohortCrypto
import CohortStore
import Foundation
import Testing

/// Free text at rest: notes encrypted, redactable audit texts erased with the participant.
struct StudyStorePrivacyTests {
    static let identity = ParticipantIdentity(name: "Kwame Abernathy", email: "kwame@example.org")

    /// Whether any of `needles` is readable in study.db or its write-ahead log.
    static func plaintext(_ fixture: StoreFixture, _ needles: [String]) -> [String] {
        var found: [String] = []
        for suffix in ["", "-wal"] {
            guard let data = FileManager.default.contents(atPath: fixture.url.path + suffix) else { continue }
            for needle in needles where data.range(of: Data(needle.utf8)) != nil { found.append("\(needle) in study.db\(suffix)") }
        }
        return found
    }

    /// A store with one enrolled participant; returns it and the participant.
    static func enrolled(_ fixture: StoreFixture) throws -> (any StudyStore, StoredParticipant) {
        let store = try fixture.open(create: true)
        try store.enroll([try enrollment(code: "P-0001", identity: identity)], actor: "coordinator", source: "roster.csv", at: fixedDate)
        return (store, try #require(try store.participant(code: "P-0001")))
    }

    static func note(_ p: Participant, minute: Int64, _ note: String?) -> CohortCore.Record {
        CohortCore.Record(
            participantID: p.id, kind: .pain, start: Timestamp(epochMilliseconds: 1_741_941_000_000 + minute * 60_000, utcOffsetSeconds: 3600),
            value: 3, source: "app", note: note)
    }

    @Test(.enabled(if: sqlite3Available, "needs the sqlite3 command-line tool"))
    func notesAreEncryptedAtRestAndReadBack() throws {
        try withStoreFixture { fixture in
            let notes = ["flare after the drive to Kwame's sister in Leeds", "woke at 4, ring finger swollen", "", nil]
            do {
                let (store, p) = try Self.enrolled(fixture)
                let records = notes.enumerated().map { Self.note(p.participant, minute: Int64($0.offset), $0.element) }
                _ = try StudyStoreTests.importRecords(store, records, pk: p.handle, file: "notes.csv")
                var read: [String?] = []
                try store.forEachRecord(p.handle, participantID: p.participant.id) { read.append($0.note) }
                // Empty notes are not stored (nothing to protect); the others come back exactly.
                #expect(read == [notes[0], notes[1], nil, nil])
                try store.purgeDeletedData()
            }
            #expect(Self.plaintext(fixture, ["Leeds", "ring finger", "flare after"]).isEmpty)
            // No plaintext column for notes at all (v5 dropped v1's `note`).
            #expect(try fixture.sqlite("SELECT count(*) FROM pragma_table_info('records') WHERE name = 'note'") == "0")
            #expect(try fixture.sqlite("SELECT count(*) FROM records WHERE note_enc IS NOT NULL") == "2")
        }
    }

    /// A sealed note is bound to its row: moved to another record it does not open, and the
    /// error names table, row and column — never the note.
    @Test(.enabled(if: sqlite3Available, "needs the sqlite3 command-line tool"))
    func aNoteMovedToAnotherRowDoesNotOpen() throws {
        try withStoreFixture { fixture in
            let pk: ParticipantHandle
            let id: UUID
            do {
                let (store, p) = try Self.enrolled(fixture)
                _ = try StudyStoreTests.importRecords(
                    store, [Self.note(p.participant, minute: 0, "first secret"), Self.note(p.participant, minute: 1, nil)], pk: p.handle, file: "a.csv")
                (pk, id) = (p.handle, p.participant.id)
            }
            // The first minute's sealed note copied onto the second minute's row (`records` has no
            // rowid: rows are picked by their key).
            try fixture.sqlite(
                """
                UPDATE records SET note_enc = (SELECT note_enc FROM records ORDER BY start_ms LIMIT 1)
                    WHERE start_ms = (SELECT max(start_ms) FROM records)
                """)
            let error = #expect(throws: CohortError.self) {
                try fixture.open().forEachRecord(pk, participantID: id) { _ in }
            }
            #expect(error?.code == .integrity)
            #expect(error?.message.contains("table records, row of participant \(pk.rowKey), column note_enc") == true, "\(error?.message ?? "")")
            #expect(error?.description.contains("secret") == false)
        }
    }

    /// A database written before notes were encrypted (schema v1 only, plaintext notes and
    /// withdrawal reasons) is upgraded by the named migration: nothing readable remains.
    @Test(.enabled(if: sqlite3Available, "needs the sqlite3 command-line tool"))
    func migrationEncryptsExistingPlaintext() throws {
        try withStoreFixture { fixture in
            let pk: ParticipantHandle
            let id: UUID
            do {
                let (store, p) = try Self.enrolled(fixture)
                (pk, id) = (p.handle, p.participant.id)
                try store.purgeDeletedData()
            }
            // The participant's row key, which the store keeps to itself.
            let rowKey = "(SELECT pk FROM participants WHERE id = '\(id.uuidString.lowercased())')"
            // Turn it back into a v1 database holding plaintext, as an older cohort wrote it.
            try fixture.sqlite(
                """
                DELETE FROM grdb_migrations WHERE identifier IN ('v2-private-text', 'v3-sites', 'v4-sharing-scopes', 'v5-no-plaintext-note', 'v6-records-by-key');
                DROP TABLE redactable_texts; ALTER TABLE participants DROP COLUMN site;
                DROP TABLE records;
                \(try RecordsByKeyMigrationTests.rowidRecordsTable(fixture, note: "note TEXT"))
                INSERT INTO records (participant_pk, kind, start_ms, start_offset, value, source, note) VALUES
                    (\(rowKey), 'pain', 1741941000000, 3600, 3, 'app', 'old plaintext note about Leeds'),
                    (\(rowKey), 'pain', 1741941060000, 3600, 2, 'app', '');
                INSERT INTO import_batches (file_name, file_sha256, format, imported_at, actor) VALUES
                    ('old.csv', '\(String(repeating: "ab", count: 32))', 'csv', '2025-03-14T08:30:00Z', 'Nurse Philippa Quarshie');
                INSERT INTO withdrawals (id, participant_pk, mode, at_ms, by_kind, actor, reason, counts_json) VALUES
                    ('\(UUID().uuidString.lowercased())', \(rowKey), 'stop', 1741941000000, 'staff', 'Dr Imani Okafor', 'moved to Leeds', '{"consents":0,"identifiers_erased":false,"records":0}');
                VACUUM;
                """)
            let planted = ["old plaintext note", "moved to Leeds", "Quarshie"]
            #expect(planted.allSatisfy { !Self.plaintext(fixture, [$0]).isEmpty }, "the fixture must start with plaintext")
            do {
                let store = try fixture.open()
                var notes: [String?] = []
                try store.forEachRecord(pk, participantID: id) { notes.append($0.note) }
                #expect(notes == ["old plaintext note about Leeds", nil])
                let withdrawal = try #require(try store.withdrawal(pk))
                #expect(withdrawal.reason == "moved to Leeds")
                #expect(withdrawal.actor == "Dr Imani Okafor")
                try store.purgeDeletedData()
            }
            try fixture.sqlite("VACUUM")
            #expect(Self.plaintext(fixture, ["old plaintext note", "moved to Leeds", "Okafor", "Quarshie"]).isEmpty)
            #expect(try fixture.sqlite("SELECT identifier FROM grdb_migrations ORDER BY identifier") == "v1-foundation\nv2-private-text\nv3-sites\nv4-sharing-scopes\nv5-no-plaintext-note\nv6-records-by-key")
        }
    }

    @Test(arguments: StoreKind.tested)
    func withdrawalReasonIsCommittedAsASaltedHashAndErased(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let reason = "Kwame Abernathy (432) 587-7269"
            let (store, p) = try Self.enrolled(fixture)
            let pid = p.participant.id.uuidString.lowercased()
            let at = Timestamp(epochMilliseconds: 1_741_941_000_000)
            try store.withdraw(
                p.handle, participantID: p.participant.id, mode: .exclude, at: at, by: "staff", actor: "Dr Imani Okafor", reason: reason,
                consentVersion: nil, receiptID: UUID())
            let event = try #require(try store.auditEvents().last)
            // The chain holds a reference, not the text; the reader sees the text.
            let committed = try #require(event.details["reason"])
            #expect(committed.hasPrefix("redactable:"))
            #expect(committed != "redactable:" + SHA256.hex(Array(reason.utf8)), "the hash must be salted")
            #expect(event.displayDetails["reason"] == reason)
            #expect(event.displayActor == "Dr Imani Okafor")
            #expect(!event.actor.contains("Okafor"))
            #expect(try store.withdrawal(p.handle)?.reason == reason)
            #expect(try store.verifyAudit(publicKey: fixture.signingKey.publicKey).isIntact)

            try store.withdraw(
                p.handle, participantID: p.participant.id, mode: .erase, at: at, by: "staff", actor: "Dr Imani Okafor",
                reason: "erase: " + reason, consentVersion: nil, receiptID: UUID())
            let events = try store.auditEvents()
            let withdrawals = events.filter { $0.action == "participant.withdraw" && $0.subject == pid }
            #expect(withdrawals.count == 2)
            for e in withdrawals {
                #expect(e.displayDetails["reason"] == AuditEvent.redactedText)
                // Staff names are not the participant's data: they stay, for accountability.
                #expect(e.displayActor == "Dr Imani Okafor")
            }
            #expect(try store.withdrawal(p.handle)?.reason == AuditEvent.redactedText)
            let verification = try store.verifyAudit(publicKey: fixture.signingKey.publicKey)
            #expect(verification.isIntact, "\(verification.firstProblem ?? "")")
            // Recomputing each hash from the committed values still works after the erase.
            for e in events {
                let input = try AuditEvent.hashInput(
                    seq: e.seq, at: e.at, actor: e.actor, action: e.action, subject: e.subject, details: e.details, prevHash: e.prevHash)
                #expect(SHA256.hex(input) == e.hash)
            }
            switch kind {
            case .sqlite where sqlite3Available:
                #expect(try fixture.sqlite("SELECT count(*) FROM redactable_texts WHERE participant_id = '\(pid)'") == "0")
            case .postgres:
                #expect(try fixture.postgres("SELECT count(*) FROM redactable_texts WHERE participant_id = '\(pid)'") == [["0"]])
            case .sqlite:
                break
            }
        }
    }
}
