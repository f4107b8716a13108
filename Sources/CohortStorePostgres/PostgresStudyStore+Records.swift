public import CohortCore
import CohortPostgres
public import CohortStore
public import Foundation

extension PostgresStudyStore {
    /// Rows fetched from a server-side cursor at a time: memory stays flat however many records
    /// a participant (or the study) has.
    static let fetchRows = 10_000
    /// Rows a record reader fetches at a time (``PostgresStudyStore/withRecordReaders(_:_:)``):
    /// one reader per thread, each with its rows in memory at once, so fewer than the store's.
    static let readerFetchRows = 2_000

    /// Streams the records of one participant, by start then kind, through a server-side cursor
    /// (``fetchRows`` at a time, one snapshot); notes are decrypted. A malformed row fails with
    /// its table, row and column.
    public func forEachRecord(_ participant: ParticipantHandle, participantID: UUID, _ body: (CohortCore.Record) throws -> Void) throws {
        try forEachRecord(participant, participantID: participantID, on: connection, batch: Self.fetchRows, body)
    }

    /// ``forEachRecord(_:participantID:_:)`` through `connection` (the store's, or a reader's),
    /// `batch` rows fetched at a time.
    func forEachRecord(
        _ participant: ParticipantHandle, participantID: UUID, on connection: SerializedConnection, batch: Int,
        _ body: (CohortCore.Record) throws -> Void
    ) throws {
        let location = self.location
        let keys = self.keys.all
        // `kind` and `source` are in the byte-order collation "C" (migration v4-bulk-records), so
        // this is SQLite's order whatever the database's collation, and the primary key serves it
        // as it is.
        let sql = """
            SELECT id, kind, start_ms, start_offset, end_ms, end_offset, value, text, source, note_enc FROM records
            WHERE participant_pk = \(participant.rowKey) ORDER BY start_ms, kind, source
            """
        try streamRows(sql, batch: batch, on: connection) { row in
            let reader = RecordRowReader(row: row, location: location)
            let (id, kind, start, end) = try reader.head()
            let value = try reader.optionalDouble(6, "value")
            let text = row[7]
            let source = try reader.source(8)
            // Text that is not bytes opens as nothing: the same refusal as a note sealed elsewhere.
            let note = try row[9].map { hex in
                try PIISealing.openStoredNote(
                    PostgresValue.bytes(fromText: hex) ?? [], keys: keys, participantPK: participant.rowKey, kind: kind.rawValue,
                    startMs: start.epochMilliseconds, source: source
                ) { column, expected in Self.problem(table: "records", rowID: id, column: column, expected: expected, location: location) }
            }
            try body(
                CohortCore.Record(
                    participantID: participantID, kind: kind, start: start, end: end, value: value, text: text,
                    source: source.isEmpty ? nil : source, note: note))
        }
    }

    /// The records of one participant (read as strictly as ``forEachRecord(_:participantID:_:)``)
    /// with no value, text or note — those columns are not fetched and nothing is decrypted — kind
    /// by kind, each kind by start then source.
    public func forEachRecordStartAndSource(_ participant: ParticipantHandle, participantID: UUID, _ body: (CohortCore.Record) throws -> Void) throws {
        try forEachRecordStartAndSource(participant, participantID: participantID, on: connection, batch: Self.fetchRows, body)
    }

    /// ``forEachRecordStartAndSource(_:participantID:_:)`` through `connection`, `batch` rows at a time.
    func forEachRecordStartAndSource(
        _ participant: ParticipantHandle, participantID: UUID, on connection: SerializedConnection, batch: Int,
        _ body: (CohortCore.Record) throws -> Void
    ) throws {
        let location = self.location
        let sql = """
            SELECT id, kind, start_ms, start_offset, end_ms, end_offset, source FROM records
            WHERE participant_pk = \(participant.rowKey) ORDER BY kind, start_ms, source
            """
        try streamRows(sql, batch: batch, on: connection) { row in
            let reader = RecordRowReader(row: row, location: location)
            let (_, kind, start, end) = try reader.head()
            let source = try reader.source(6)
            try body(CohortCore.Record(participantID: participantID, kind: kind, start: start, end: end, source: source.isEmpty ? nil : source))
        }
    }

    /// Streams (participant, kind, start) of every record — what compliance needs — through a
    /// server-side cursor.
    public func forEachRecordStart(_ body: (ParticipantHandle, RecordKind, Timestamp) throws -> Void) throws {
        let location = self.location
        try streamRows("SELECT id, participant_pk, kind, start_ms, start_offset FROM records") { row in
            let reader = RecordRowReader(row: row, location: location)
            let pk = try reader.int64(1, "participant_pk")
            let start = Timestamp(epochMilliseconds: try reader.int64(3, "start_ms"), utcOffsetSeconds: try reader.offset(4, "start_offset"))
            try body(ParticipantHandle(rowKey: pk), try reader.kind(2), start)
        }
    }

    /// How many records are stored: in all, or of `participant`.
    public func recordCount(_ participant: ParticipantHandle?) throws -> Int {
        try reading { conn in
            let rows =
                if let participant {
                    try conn.query("SELECT count(*) FROM records WHERE participant_pk = $1", [String(participant.rowKey)])
                } else {
                    try conn.query("SELECT count(*) FROM records")
                }
            return (rows.first?.first ?? nil).flatMap { Int($0) } ?? 0
        }
    }

    /// Counts of rows in the main tables (for summaries and `cohort status`).
    public func counts() throws -> [String: Int] {
        try reading { conn in
            var result: [String: Int] = [:]
            for table in ["participants", "consents", "records", "import_batches", "audit_events", "withdrawals"] {
                result[table] = (try conn.query("SELECT count(*) FROM \(table)").first?.first ?? nil).flatMap { Int($0) } ?? 0
            }
            return result
        }
    }

    /// Nothing: the client keeps no page cache (a query's rows are freed when it is read).
    public func releaseCachedMemory() {}

    /// Runs `sql` through a server-side cursor inside one read transaction and calls `body` with
    /// each row (text columns, nil = NULL), `batch` rows (default ``fetchRows``) in memory at a time.
    func streamRows(_ sql: String, batch: Int = fetchRows, on connection: SerializedConnection? = nil, _ body: ([String?]) throws -> Void) throws {
        try reading(on: connection ?? self.connection) { conn in
            try conn.query("DECLARE cohort_stream NO SCROLL CURSOR FOR \(sql)")
            while true {
                let rows = try conn.query("FETCH FORWARD \(batch) FROM cohort_stream")
                for row in rows { try body(row) }
                if rows.count < batch { break }
            }
            try conn.query("CLOSE cohort_stream")
        }
    }
}

/// Reads the text columns of one fetched `records` row strictly: a value that is not what the
/// column holds fails with the table, row and column, never the value. Column 0 is the row's id.
struct RecordRowReader {
    let row: [String?]
    let location: String

    private var rowID: Int64? { row.first.flatMap { $0 }.flatMap { Int64($0) } }

    func problem(_ column: String, expected: String) -> CohortError {
        PostgresStudyStore.problem(table: "records", rowID: rowID, column: column, expected: expected, location: location)
    }

    /// Columns 0–5 of a `records` row as both record reads select them: id, kind, start with its
    /// offset, end with its offset.
    func head() throws -> (id: Int64, kind: RecordKind, start: Timestamp, end: Timestamp?) {
        let id = try int64(0, "id")
        let kind = try self.kind(1)
        let start = Timestamp(epochMilliseconds: try int64(2, "start_ms"), utcOffsetSeconds: try offset(3, "start_offset"))
        var end: Timestamp?
        if let endMs = try optionalInt64(4, "end_ms") {
            end = Timestamp(epochMilliseconds: endMs, utcOffsetSeconds: try offset(5, "end_offset"))
        }
        return (id, kind, start, end)
    }

    /// The `source` column at `index` (empty when the record has none; never NULL).
    func source(_ index: Int) throws -> String {
        guard let source = row[index] else { throw problem("source", expected: "a text (empty when none)") }
        return source
    }

    func int64(_ index: Int, _ column: String) throws -> Int64 {
        guard let value = try optionalInt64(index, column) else { throw problem(column, expected: "an integer") }
        return value
    }

    func optionalInt64(_ index: Int, _ column: String) throws -> Int64? {
        guard index < row.count, let text = row[index] else { return nil }
        guard let value = Int64(text) else { throw problem(column, expected: "an integer") }
        return value
    }

    func offset(_ index: Int, _ column: String) throws -> Int32 {
        let n = try int64(index, column)
        guard abs(n) <= 18 * 3600 else { throw problem(column, expected: "a UTC offset in seconds (within ±18 hours)") }
        return Int32(n)
    }

    func optionalDouble(_ index: Int, _ column: String) throws -> Double? {
        guard index < row.count, let text = row[index] else { return nil }
        guard let value = Double(text) else { throw problem(column, expected: "a number") }
        return value
    }

    func kind(_ index: Int) throws -> RecordKind {
        guard index < row.count, let text = row[index], let kind = RecordKind(rawValue: text) else {
            throw problem("kind", expected: "a record kind this version of cohort knows")
        }
        return kind
    }
}
