import CohortCore
import CohortStore
import Foundation
import Synchronization
import Testing

/// Issue 28: migration `v6-records-by-key` clusters SQLite's `records` on its key (`WITHOUT
/// ROWID`). A study written before it is upgraded with every record, sealed note and batch
/// intact, duplicates still refused by the key, and the old table's pages given back; a new
/// database is created with 16 KiB pages. Read through `sqlite3`'s catalogue, not the store's
/// migration code.
struct RecordsByKeyMigrationTests {
    /// The `records` table as cohort wrote it before `v6-records-by-key` — a rowid table with an
    /// `id` and the key as a unique index — made from the fixture's current (clustered) table, so
    /// the columns are not written out twice: `note` names the note column (`note_enc BLOB` from
    /// v2 on, `note TEXT` in v1).
    static func rowidRecordsTable(_ fixture: StoreFixture, note: String = "note_enc BLOB") throws -> String {
        let clustered = try fixture.sqlite("SELECT sql FROM sqlite_master WHERE name = 'records'")
        let key = "PRIMARY KEY (participant_pk, kind, start_ms, source)\n) WITHOUT ROWID"
        try #require(clustered.contains(key) && clustered.contains("note_enc BLOB"), "the clustered table this test starts from")
        return clustered
            .replacingOccurrences(of: "CREATE TABLE \"records\" (", with: "CREATE TABLE records (\n    id INTEGER PRIMARY KEY,")
            .replacingOccurrences(of: "note_enc BLOB", with: note)
            .replacingOccurrences(of: key, with: "UNIQUE (participant_pk, kind, start_ms, source)\n)") + ";"
    }

    @Test(.enabled(if: sqlite3Available, "needs the sqlite3 command-line tool"))
    func aVersionFiveStudyIsUpgradedWithEveryRecord() throws {
        try withStoreFixture { fixture in
            let pk: ParticipantHandle
            let participant: Participant
            let columns = "participant_pk, kind, start_ms, start_offset, end_ms, end_offset, value, text, source, batch_id, note_enc"
            // Rows as the shell prints them, the sealed note in hex: its raw bytes may hold a line break.
            let shown = columns.replacingOccurrences(of: "note_enc", with: "hex(note_enc)")
            do {
                let (store, p) = try StudyStorePrivacyTests.enrolled(fixture)
                (pk, participant) = (p.handle, p.participant)
                // 300 records over two kinds, in an order that is not the key's, one with a note.
                let records = (0..<300).map { i in
                    var record = StudyStorePrivacyTests.note(p.participant, minute: Int64((i * 7) % 300), i == 5 ? "a sealed note" : nil)
                    if i % 2 == 1 { record.kind = .fatigue }
                    return record
                }
                _ = try StudyStoreTests.importRecords(store, records, pk: pk, file: "a.csv")
            }
            let before = try fixture.sqlite("SELECT \(shown) FROM records ORDER BY participant_pk, kind, start_ms, source")
            #expect(before.split(separator: "\n").count == 300)
            // Back to v5: the rowid table with its unique index, the rows in import order.
            try fixture.sqlite(
                """
                CREATE TABLE records_now AS SELECT \(columns) FROM records;
                DROP TABLE records;
                \(try Self.rowidRecordsTable(fixture))
                INSERT INTO records (\(columns)) SELECT \(columns) FROM records_now ORDER BY start_ms DESC;
                DROP TABLE records_now;
                DELETE FROM grdb_migrations WHERE identifier = 'v6-records-by-key';
                """)
            #expect(try fixture.sqlite("SELECT count(*) FROM pragma_table_info('records') WHERE name = 'id'") == "1")
            let upgrades = Self.counter()
            let store = try fixture.open(options: .init(onUpgrading: { upgrades.withLock { $0 += 1 } }))
            #expect(upgrades.withLock { $0 } == 1, "the CLI's note is printed once, before the upgrade")
            _ = try fixture.open(options: .init(onUpgrading: { upgrades.withLock { $0 += 1 } }))
            #expect(upgrades.withLock { $0 } == 1, "an up-to-date database is not upgraded again")
            #expect(try fixture.sqlite("SELECT identifier FROM grdb_migrations ORDER BY identifier").hasSuffix("v6-records-by-key"))
            #expect(try fixture.sqlite("SELECT sql FROM sqlite_master WHERE name = 'records'").contains("WITHOUT ROWID"))
            #expect(try fixture.sqlite("SELECT count(*) FROM pragma_table_info('records') WHERE name = 'id'") == "0")
            #expect(try fixture.sqlite("SELECT \(shown) FROM records ORDER BY participant_pk, kind, start_ms, source") == before)
            #expect(try fixture.sqlite("PRAGMA freelist_count") == "0", "the old table's pages are given back")
            #expect(try fixture.sqlite("PRAGMA foreign_key_check") == "")
            var notes: [String] = []
            try store.forEachRecord(pk, participantID: participant.id) { if let note = $0.note { notes.append(note) } }
            #expect(notes == ["a sealed note"], "a sealed note still opens: it is bound to the record's key, not to a row id")
            // The key still refuses a second copy of a stored record.
            let again = try StudyStoreTests.importRecords(store, [StudyStorePrivacyTests.note(participant, minute: 0, nil)], pk: pk, file: "b.csv")
            #expect(again.inserted == 0)
            #expect(try store.recordCount(pk) == 300)
        }
    }

    @Test(.enabled(if: sqlite3Available, "needs the sqlite3 command-line tool"))
    func aNewDatabaseHasSixteenKiBPagesAndClusteredRecords() throws {
        try withStoreFixture { fixture in
            let upgrades = Self.counter()
            _ = try fixture.open(create: true, options: .init(onUpgrading: { upgrades.withLock { $0 += 1 } }))
            #expect(upgrades.withLock { $0 } == 0, "a new database is created, not upgraded")
            #expect(try fixture.sqlite("PRAGMA page_size") == "16384")
            #expect(try fixture.sqlite("SELECT sql FROM sqlite_master WHERE name = 'records'").contains("WITHOUT ROWID"))
            #expect(try fixture.sqlite("PRAGMA journal_mode") == "wal")
        }
    }

    /// A count the store's callback bumps (from whatever thread opens it).
    static func counter() -> Mutex<Int> { Mutex(0) }
}
