public import CohortCore
public import Foundation
import CohortCrypto
import GRDB
import GRDBSQLite

/// Inserts records inside an import transaction through prepared statements.
///
/// The hot path of `cohort data import`. `add` queues rows and writes them `batchSize` at a time
/// with one multi-row `INSERT … ON CONFLICT DO NOTHING` (SQLite handles the rows in order, so a
/// duplicate of an earlier row of the same group is caught as well); `insert` writes one row at
/// once. Values are bound straight to the SQLite statement (no per-row `StatementArguments`,
/// text bound without copies) and the statement is stepped directly: that is safe here because
/// it runs inside the transaction `importBatch` opened, the store registers no transaction
/// observers, and the statement is reset after every use.
///
/// A non-empty note is encrypted (AES-256-GCM under pii.key, associated data naming the record's
/// unique key and the field) before it is queued; notes are rare, so the hot path stays fast.
public final class SQLiteRecordInserter: StoreRecordSink {
    /// Rows per multi-row statement (1,408 parameters). 128 rather than 32: each statement keeps
    /// a journal of the pages it changes, and fewer, larger statements share them — the writer
    /// thread's CPU at bench M went from 2.35–2.69 s to 2.21–2.30 s (perf cpu-clock, 3 runs each).
    static let batchSize = 128
    static let columnCount = 11

    /// One queued row; its text columns are ranges in its ``Rows``' `text`.
    struct Row: Sendable {
        var participantPK: Int64
        var kind: Range<Int>
        var startMs: Int64
        var startOffset: Int64
        var endMs: Int64?
        var endOffset: Int64?
        var value: Double?
        var text: Range<Int>?
        var source: Range<Int>
        /// The sealed note's bytes (bound as a blob).
        var note: Range<Int>?
    }

    /// Rows ready to bind: each record's columns, its text columns' UTF-8 (and a sealed note)
    /// one after another in one buffer. Made by ``add(_:participant:)`` on the writer's thread,
    /// or ahead of it by the ``preparer`` on another.
    struct Rows: Sendable {
        var rows: [Row] = []
        /// The UTF-8 of the rows' text columns, one after another.
        var text: [UInt8] = []

        var count: Int { rows.count }

        mutating func reserve(_ count: Int) {
            rows.reserveCapacity(count)
            text.reserveCapacity(count * 24)
        }

        mutating func removeAll() {
            rows.removeAll(keepingCapacity: true)
            text.removeAll(keepingCapacity: true)
        }

        /// Appends `record`'s row; a non-empty note is sealed (AES-256-GCM under `piiKey`,
        /// associated data naming the record's unique key and the field).
        mutating func append(_ record: CohortCore.Record, participantPK: Int64, piiKey: [UInt8]) throws {
            var note: Range<Int>?
            if let text = record.note, !text.isEmpty {
                let sealed = try PIISealing.sealNote(
                    text, key: piiKey, participantPK: participantPK, kind: record.kind.rawValue, startMs: record.start.epochMilliseconds,
                    source: record.source ?? "")
                note = append(bytes: sealed)
            }
            rows.append(
                Row(
                    participantPK: participantPK, kind: append(record.kind.rawValue), startMs: record.start.epochMilliseconds,
                    startOffset: Int64(record.start.utcOffsetSeconds), endMs: record.end?.epochMilliseconds,
                    endOffset: record.end.map { Int64($0.utcOffsetSeconds) }, value: record.value, text: record.text.map { append($0) },
                    source: append(record.source ?? ""), note: note))
        }

        /// Appends `other`'s row `index`, its text copied into this buffer.
        mutating func append(_ other: Rows, at index: Int) {
            var row = other.rows[index]
            func copy(_ range: Range<Int>) -> Range<Int> {
                let start = text.count
                text.append(contentsOf: other.text[range])
                return start..<text.count
            }
            row.kind = copy(row.kind)
            row.text = row.text.map(copy)
            row.source = copy(row.source)
            row.note = row.note.map(copy)
            rows.append(row)
        }

        private mutating func append(_ string: String) -> Range<Int> { append(bytes: string.utf8) }

        private mutating func append(bytes: some Sequence<UInt8>) -> Range<Int> {
            let start = text.count
            text.append(contentsOf: bytes)
            return start..<text.count
        }
    }

    let single: Statement
    let batch: Statement
    let batchID: Int64
    let db: Database
    let piiKey: [UInt8]
    /// Rows queued by `add`, not yet written.
    private var queue = Rows()
    /// Rows `add` has stored so far (duplicates not counted). Complete after `flush()`.
    public private(set) var insertedCount = 0
    /// The participants written, for the withdrawal check at commit.
    package private(set) var imported = ImportedParticipants()

    /// Nothing is in flight: the transaction's rollback drops what was written.
    package func abandon() {}

    init(db: Database, batchID: Int64, piiKey: [UInt8]) throws {
        self.db = db
        self.batchID = batchID
        self.piiKey = piiKey
        let head = "INSERT INTO records (participant_pk, kind, start_ms, start_offset, end_ms, end_offset, value, text, source, note_enc, batch_id) VALUES "
        let tuple = "(" + Array(repeating: "?", count: Self.columnCount).joined(separator: ", ") + ")"
        single = try db.makeStatement(sql: head + tuple + " ON CONFLICT DO NOTHING")
        batch = try db.makeStatement(sql: head + Array(repeating: tuple, count: Self.batchSize).joined(separator: ", ") + " ON CONFLICT DO NOTHING")
        queue.reserve(Self.batchSize)
    }

    /// Seals and encodes records into this inserter's rows on the caller's thread.
    public var preparer: RecordPreparer { RecordPreparer(sqliteKey: piiKey) }

    /// Inserts `record` for `participant` now; false when the same record (same participant,
    /// kind, start and source) is already stored. Writes queued rows first.
    public func insert(_ record: CohortCore.Record, participant: ParticipantHandle) throws -> Bool {
        try flush()
        try enqueue(record, participantPK: participant.rowKey)
        defer { queue.removeAll() }
        return try execute(single, rows: queue, 0..<1) > 0
    }

    /// Queues `record` for `participant`; rows are written in groups. Call `flush()` after the
    /// last one, then read `insertedCount`.
    public func add(_ record: CohortCore.Record, participant: ParticipantHandle) throws {
        try enqueue(record, participantPK: participant.rowKey)
        if queue.count == Self.batchSize { try flush() }
    }

    /// Queues rows this inserter's ``preparer`` made, in order: the rows already queued are
    /// topped up first, then whole groups are written straight from `prepared`'s buffer, and the
    /// rest is queued — the same statements, in the same order, as adding each record.
    public func add(_ prepared: PreparedRecords) throws {
        guard let rows = prepared.sqlite else {
            for (participant, record) in prepared.records { try add(record, participant: participant) }
            return
        }
        for row in rows.rows { imported.note(row.participantPK, startMs: row.startMs) }
        var next = 0
        while queue.count > 0, next < rows.count {
            queue.append(rows, at: next)
            next += 1
            if queue.count == Self.batchSize { try flush() }
        }
        while rows.count - next >= Self.batchSize {
            insertedCount += try execute(batch, rows: rows, next..<(next + Self.batchSize))
            next += Self.batchSize
        }
        while next < rows.count {
            queue.append(rows, at: next)
            next += 1
        }
    }

    /// Writes every queued row.
    public func flush() throws {
        guard queue.count > 0 else { return }
        defer { queue.removeAll() }
        if queue.count == Self.batchSize {
            insertedCount += try execute(batch, rows: queue, 0..<Self.batchSize)
        } else {
            for i in 0..<queue.count { insertedCount += try execute(single, rows: queue, i..<(i + 1)) }
        }
    }

    /// Writes every queued row, then looks up the batch and each participant the rows were
    /// written for: the import's transaction does not enforce foreign keys row by row
    /// (``SQLiteStudyStore/importTransaction(_:)``), and this is the same check made once per
    /// key. Every row this inserter binds has `batchID` and a key noted in ``imported``.
    public func finish() throws {
        try flush()
        let batch = try db.cachedStatement(sql: "SELECT 1 FROM import_batches WHERE id = ?")
        let participant = try db.cachedStatement(sql: "SELECT 1 FROM participants WHERE pk = ?")
        var missing = try Int.fetchOne(batch, arguments: [batchID]) == nil
        for key in imported.latestStart.keys where !missing {
            missing = try Int.fetchOne(participant, arguments: [key]) == nil
        }
        guard missing else { return }
        throw CohortError(
            .integrity, "the import wrote records for a participant or an import batch that is not in the study database; nothing was imported",
            at: .init(file: SQLiteStudyStore.fileName, field: "records.participant_pk"),
            hint: "this is a bug in cohort: report it; the study database is unchanged")
    }

    private func enqueue(_ record: CohortCore.Record, participantPK: Int64) throws {
        imported.note(participantPK, startMs: record.start.epochMilliseconds)
        try queue.append(record, participantPK: participantPK, piiKey: piiKey)
    }

    /// Binds `rows`' rows `range` to `statement` (which has that many value tuples) and runs it;
    /// the number of rows stored.
    private func execute(_ statement: Statement, rows: Rows, _ range: Range<Int>) throws -> Int {
        let stmt = statement.sqliteStatement
        let connection = db.sqliteConnection
        let code: CInt = rows.text.withUnsafeBufferPointer { buffer in
            func bind(_ range: Range<Int>?, at index: CInt) {
                guard let range, let base = buffer.baseAddress else {
                    sqlite3_bind_null(stmt, index)
                    return
                }
                // SQLITE_STATIC (nil destructor): the buffer outlives the step below.
                (base + range.lowerBound).withMemoryRebound(to: CChar.self, capacity: range.count) {
                    _ = sqlite3_bind_text(stmt, index, $0, CInt(range.count), nil)
                }
            }
            func bindBlob(_ range: Range<Int>?, at index: CInt) {
                guard let range, let base = buffer.baseAddress else {
                    sqlite3_bind_null(stmt, index)
                    return
                }
                _ = sqlite3_bind_blob(stmt, index, base + range.lowerBound, CInt(range.count), nil)
            }
            func bind(_ value: Int64?, at index: CInt) {
                if let value { sqlite3_bind_int64(stmt, index, value) } else { sqlite3_bind_null(stmt, index) }
            }
            for (n, i) in range.enumerated() {
                let row = rows.rows[i]
                let first = CInt(n * Self.columnCount)
                sqlite3_bind_int64(stmt, first + 1, row.participantPK)
                bind(row.kind, at: first + 2)
                sqlite3_bind_int64(stmt, first + 3, row.startMs)
                sqlite3_bind_int64(stmt, first + 4, row.startOffset)
                bind(row.endMs, at: first + 5)
                bind(row.endOffset, at: first + 6)
                if let value = row.value { sqlite3_bind_double(stmt, first + 7, value) } else { sqlite3_bind_null(stmt, first + 7) }
                bind(row.text, at: first + 8)
                bind(row.source, at: first + 9)
                bindBlob(row.note, at: first + 10)
                sqlite3_bind_int64(stmt, first + 11, batchID)
            }
            let code = sqlite3_step(stmt)
            sqlite3_reset(stmt)
            return code
        }
        guard code == SQLITE_DONE else {
            let message = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message)
        }
        return connection.map { Int(sqlite3_changes($0)) } ?? 0
    }
}

extension SQLiteStudyStore {

    /// Streams the records of one participant by start, then kind, then source, without loading
    /// them all; notes are decrypted. A malformed row fails with its table, row and column.
    public func forEachRecord(_ participant: ParticipantHandle, participantID: UUID, _ body: (CohortCore.Record) throws -> Void) throws {
        try read { db in try Self.forEachRecord(db, participant, participantID: participantID, piiKey: piiKey, body) }
    }

    /// The records of one participant with no value, text or note (those columns are not read;
    /// nothing is decrypted), kind by kind in the unique index's order (kind, start, source), so
    /// SQLite sorts nothing.
    public func forEachRecordStartAndSource(_ participant: ParticipantHandle, participantID: UUID, _ body: (CohortCore.Record) throws -> Void) throws {
        try read { db in try Self.forEachRecordStartAndSource(db, participant, participantID: participantID, body) }
    }

    /// ``forEachRecord(_:participantID:_:)`` on connection `db` (in a read transaction).
    static func forEachRecord(
        _ db: Database, _ participant: ParticipantHandle, participantID: UUID, piiKey: [UInt8], _ body: (CohortCore.Record) throws -> Void
    ) throws {
        // Made at the first note, and used for the participant's others.
        var opener: AESGCM.Opener?
        try stepRecordsInStartOrder(db, participant) { columns in
            let row = try columns.row()
            let note = try row.sealedNote.map { sealed in
                try PIISealing.openStoredNote(
                    sealed, key: piiKey, opener: &opener, participantPK: row.participantPK, kind: row.kind.rawValue, startMs: row.start.epochMilliseconds,
                    source: row.source
                ) { column, expected in RowReader.recordProblem(participantPK: row.participantPK, column: column, expected: expected) }
            }
            try body(
                CohortCore.Record(
                    participantID: participantID, kind: row.kind, start: row.start, end: row.end, value: row.value, text: row.text,
                    source: row.source.isEmpty ? nil : row.source, note: note))
        }
    }

    /// ``forEachRecordStartAndSource(_:participantID:_:)`` on connection `db` (in a read transaction).
    static func forEachRecordStartAndSource(
        _ db: Database, _ participant: ParticipantHandle, participantID: UUID, _ body: (CohortCore.Record) throws -> Void
    ) throws {
        try stepRecords(db, columns: RecordStatement.startAndSourceColumns, order: "kind, start_ms, source", participant) { columns in
            let row = try columns.startAndSource()
            try body(
                CohortCore.Record(participantID: participantID, kind: row.kind, start: row.start, end: row.end, source: row.source.isEmpty ? nil : row.source))
        }
    }

    /// Steps the participant's `records` rows (`columns`, in `order`) and calls `body` on each
    /// with the statement's reader. One statement per connection and query (GRDB's cache), read
    /// by column index.
    private static func stepRecords(
        _ db: Database, columns: String, order: String, _ participant: ParticipantHandle, _ body: (inout RecordStatement) throws -> Void
    ) throws {
        let statement = try db.cachedStatement(sql: "SELECT \(columns) FROM records WHERE participant_pk = ? ORDER BY \(order)")
        let stmt = statement.sqliteStatement
        sqlite3_reset(stmt)
        sqlite3_clear_bindings(stmt)
        defer { sqlite3_reset(stmt) }
        sqlite3_bind_int64(stmt, 1, participant.rowKey)
        var reader = RecordStatement(statement)
        while true {
            let code = sqlite3_step(stmt)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { throw stepError(db, code) }
            try body(&reader)
        }
    }

    /// The most kinds ``stepRecordsInStartOrder(_:_:_:)`` reads at once: one more than there
    /// are, so a participant with more distinct kinds than that has at least one unknown kind
    /// among them, whose first row fails the read (``RecordStatement`` decodes strictly).
    private static let kindSlots = RecordKind.allCases.count + 1

    /// Steps the participant's `records` rows (``RecordStatement/columns``) by start, then kind,
    /// then source — what `ORDER BY start_ms, kind, source` gives — and calls `body` on each,
    /// without SQLite sorting them: each kind the participant has is read by a statement of its
    /// own in the unique index's order (start, then source, within a kind), and the kinds' rows
    /// are merged here by start, ties in kind order. No temporary b-tree: the sort's copy of every
    /// row is not made, no sort buffer grows with a participant's records, and no large
    /// participant's rows spill into SQLite's temporary folder.
    private static func stepRecordsInStartOrder(_ db: Database, _ participant: ParticipantHandle, _ body: (inout RecordStatement) throws -> Void) throws {
        var slots: [KindSlot] = []
        defer { for slot in slots { sqlite3_reset(slot.stmt) } }
        // The participant's kinds in SQLite's order of them (the index's), one index seek each;
        // each kind is bound as the value read, whatever its type.
        let first = try db.cachedStatement(sql: "SELECT kind FROM records WHERE participant_pk = ? ORDER BY kind LIMIT 1").sqliteStatement
        let next = try db.cachedStatement(sql: "SELECT kind FROM records WHERE participant_pk = ? AND kind > ? ORDER BY kind LIMIT 1").sqliteStatement
        while slots.count < kindSlots {
            let probe = slots.isEmpty ? first : next
            sqlite3_reset(probe)
            defer { sqlite3_reset(probe) }  // no statement left standing on a row: it would hold the read open
            sqlite3_bind_int64(probe, 1, participant.rowKey)
            if let last = slots.last { sqlite3_bind_value(probe, 2, sqlite3_column_value(last.stmt, 1)) }
            let code = sqlite3_step(probe)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { throw stepError(db, code) }
            let statement = try db.cachedStatement(
                sql: "SELECT /* kind \(slots.count) */ \(RecordStatement.columns) FROM records WHERE participant_pk = ? AND kind = ? ORDER BY start_ms, source")
            let stmt = statement.sqliteStatement
            sqlite3_reset(stmt)
            sqlite3_clear_bindings(stmt)
            sqlite3_bind_int64(stmt, 1, participant.rowKey)
            sqlite3_bind_value(stmt, 2, sqlite3_column_value(probe, 0))
            slots.append(KindSlot(stmt: stmt, reader: RecordStatement(statement, selectsOneKind: true)))  // reset on the way out from here
            guard try slots[slots.count - 1].step(db) else { throw stepError(db, SQLITE_CORRUPT) }  // its kind's row was just seen
        }
        // Merge: the slot whose row starts first, the earliest kind on a tie.
        while true {
            var earliest = -1
            for index in slots.indices where slots[index].live {
                if earliest < 0 || slots[index].startMs < slots[earliest].startMs { earliest = index }
            }
            guard earliest >= 0 else { return }
            try body(&slots[earliest].reader)
            _ = try slots[earliest].step(db)
        }
    }

    /// One kind's statement in ``stepRecordsInStartOrder(_:_:_:)``, its reader, and the start of
    /// the row it stands on.
    private struct KindSlot {
        let stmt: SQLiteStatement
        var reader: RecordStatement
        var startMs: Int64 = 0
        var live = false

        /// Steps to the next row; false (and not live) after the last.
        mutating func step(_ db: Database) throws -> Bool {
            let code = sqlite3_step(stmt)
            if code == SQLITE_ROW {
                startMs = sqlite3_column_int64(stmt, 2)
                live = true
            } else if code == SQLITE_DONE {
                live = false
            } else {
                live = false
                throw SQLiteStudyStore.stepError(db, code)
            }
            return live
        }
    }

    /// The error of a statement step that failed with `code`.
    private static func stepError(_ db: Database, _ code: CInt) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: db.sqliteConnection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) })
    }

    /// Streams (participant, kind, start) of every record — what compliance needs.
    public func forEachRecordStart(_ body: (ParticipantHandle, RecordKind, Timestamp) throws -> Void) throws {
        try read { db in
            let cursor = try RecordRow.fetchCursor(db, sql: "SELECT \(RecordRow.columns) FROM records")
            while let row = try cursor.next() {
                try body(ParticipantHandle(rowKey: row.participantPK), row.kind, row.start)
            }
        }
    }

    /// Migration step: every plaintext note is encrypted into `note_enc` and its text removed.
    static func encryptPlaintextNotes(_ db: Database, piiKey: [UInt8]) throws {
        let rows = try Row.fetchAll(db, sql: "SELECT id, participant_pk, kind, start_ms, source, note FROM records WHERE note IS NOT NULL")
        for row in rows {
            let r = RowReader(row, table: "records", file: "study.db", rowIDColumn: "id")
            let note = try r.optionalString("note") ?? ""
            var sealed: Data?
            if !note.isEmpty {
                sealed = Data(
                    try PIISealing.sealNote(
                        note, key: piiKey, participantPK: try r.int64("participant_pk"), kind: try r.string("kind"), startMs: try r.int64("start_ms"),
                        source: try r.optionalString("source") ?? ""))
            }
            try db.execute(sql: "UPDATE records SET note = NULL, note_enc = ? WHERE id = ?", arguments: [sealed, try r.int64("id")])
        }
    }

    /// How many records are stored: in all, or of `participant`.
    public func recordCount(_ participant: ParticipantHandle?) throws -> Int {
        try read { db in
            if let participant {
                return try Int.fetchOne(db, sql: "SELECT count(*) FROM records WHERE participant_pk = ?", arguments: [participant.rowKey]) ?? 0
            }
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM records") ?? 0
        }
    }

    /// Counts of rows in the main tables (for summaries and `cohort status`).
    public func counts() throws -> [String: Int] {
        try read { db in
            var result: [String: Int] = [:]
            for table in ["participants", "consents", "records", "import_batches", "audit_events", "withdrawals"] {
                result[table] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0
            }
            return result
        }
    }

    /// SQLite's `sqlite3_db_release_memory` on the store's connection: its page cache is emptied
    /// (the pages are read again from the file when next needed).
    public func releaseCachedMemory() {
        dbQueue.releaseMemory()
    }

    /// Bytes the store's connection holds in its page cache (`SQLITE_DBSTATUS_CACHE_USED`), for
    /// the tests of ``releaseCachedMemory()``.
    package func cachedBytes() throws -> Int {
        try read { db in
            var used: Int32 = 0
            var highwater: Int32 = 0
            sqlite3_db_status(db.sqliteConnection, SQLITE_DBSTATUS_CACHE_USED, &used, &highwater, 0)
            return Int(used)
        }
    }
}
