public import CohortCore
import CohortPostgres
public import CohortStore
import Foundation

/// Stores an import's records on PostgreSQL, inside the import's transaction, through COPY.
///
/// The hot path of `cohort data import` on PostgreSQL. `add` encodes each row in PostgreSQL's
/// binary COPY format (no text escaping to get wrong: every value is sent as its length and its
/// bytes) into a buffer; every ``chunkRows`` rows, and at `flush()`, the buffer is streamed with
/// `COPY … FROM STDIN (FORMAT binary)` into a temporary staging table made for this transaction
/// (`ON COMMIT DROP`), then moved into `records` by one `INSERT … SELECT` of the rows not stored
/// yet, whose row count is the number of new records: a duplicate of a stored record, or of an
/// earlier row of the same file, is skipped, and of repeated rows the first one wins, as on
/// SQLite. The staging table is emptied for the next chunk, so it stays small however large the
/// file is. When another coordinator stores one of the chunk's records at the same moment, the
/// chunk goes again with `ON CONFLICT DO NOTHING` (see ``flush()``).
///
/// `insert` (one row, answering whether it was new) writes the queued rows first, then runs one
/// `INSERT … ON CONFLICT DO NOTHING`.
///
/// A non-empty note is sealed (AES-256-GCM under pii.key, associated data naming the record's
/// unique key and the field, as on SQLite) before it is queued: the server never sees it.
public final class PostgresRecordSink: RecordSink {
    /// Rows per COPY chunk.
    static let chunkRows = 50_000
    /// Columns of the staging table, in COPY order.
    static let stagingColumns = "ord, participant_pk, kind, start_ms, start_offset, end_ms, end_offset, value, text, source, note_enc"
    static let recordColumns = "participant_pk, kind, start_ms, start_offset, end_ms, end_offset, value, text, source, note_enc, batch_id"
    /// The binary COPY header: signature, flags, header-extension length.
    static let copyHeader: [UInt8] = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00] + [0, 0, 0, 0] + [0, 0, 0, 0]

    let connection: PostgresConnection
    let batchID: Int64
    let piiKey: [UInt8]
    /// The binary COPY tuples of the rows queued by `add`, not yet written.
    private var buffer: [UInt8] = []
    private var queued = 0
    /// Rows queued so far in this import (their order in the file, for "first one wins").
    private var ordinal: Int64 = 0
    /// Rows `add` has stored so far (duplicates not counted). Complete after `flush()`.
    public private(set) var insertedCount = 0
    /// The participants written, for the withdrawal check at commit.
    private(set) var imported = ImportedParticipants()

    /// Makes the staging table; call inside the import's transaction.
    init(connection: PostgresConnection, batchID: Int64, piiKey: [UInt8]) throws {
        self.connection = connection
        self.batchID = batchID
        self.piiKey = piiKey
        try connection.query(
            """
            CREATE TEMP TABLE cohort_record_staging (
                ord bigint NOT NULL, participant_pk bigint NOT NULL, kind text NOT NULL, start_ms bigint NOT NULL,
                start_offset integer NOT NULL, end_ms bigint, end_offset integer, value double precision, text text,
                source text NOT NULL, note_enc bytea
            ) ON COMMIT DROP
            """)
        // The chunk's ORDER BY sorts in memory rather than on disk.
        try connection.query("SET LOCAL work_mem = '64MB'")
        buffer.reserveCapacity(8 << 20)
    }

    /// Inserts `record` for `participant` now; false when the same record (same participant,
    /// kind, start and source) is already stored. Writes queued rows first.
    public func insert(_ record: CohortCore.Record, participant: ParticipantHandle) throws -> Bool {
        try flush()
        let pk = participant.rowKey
        imported.note(pk, startMs: record.start.epochMilliseconds)
        let source = record.source ?? ""
        let note = try sealedNote(record, participantPK: pk)
        let changed = try connection.command(
            "INSERT INTO records (\(Self.recordColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING",
            values: [
                .int(pk), .text(record.kind.rawValue), .int(record.start.epochMilliseconds), .int(Int64(record.start.utcOffsetSeconds)),
                .optional(record.end?.epochMilliseconds), .optional(record.end.map { Int64($0.utcOffsetSeconds) }),
                record.value.map { .double($0) } ?? .null, .optional(record.text), .text(source), .optional(note), .int(batchID),
            ])
        return changed > 0
    }

    /// Queues `record` for `participant`; rows are written a chunk at a time. Call `flush()`
    /// after the last one, then read `insertedCount`.
    public func add(_ record: CohortCore.Record, participant: ParticipantHandle) throws {
        let pk = participant.rowKey
        imported.note(pk, startMs: record.start.epochMilliseconds)
        let note = try sealedNote(record, participantPK: pk)
        ordinal += 1
        append(Int16(11))
        field(ordinal)
        field(pk)
        field(record.kind.rawValue)
        field(record.start.epochMilliseconds)
        field(Int32(record.start.utcOffsetSeconds))
        if let end = record.end {
            field(end.epochMilliseconds)
            field(Int32(end.utcOffsetSeconds))
        } else {
            null()
            null()
        }
        if let value = record.value { field(value.bitPattern) } else { null() }
        if let text = record.text { field(text) } else { null() }
        field(record.source ?? "")
        if let note {
            append(Int32(note.count))
            buffer.append(contentsOf: note)
        } else {
            null()
        }
        queued += 1
        if queued >= Self.chunkRows { try flush() }
    }

    /// Writes every queued row: COPY into the staging table, then into `records`.
    public func flush() throws {
        guard queued > 0 else { return }
        defer {
            buffer.removeAll(keepingCapacity: true)
            queued = 0
        }
        try connection.copyIn("COPY cohort_record_staging (\(Self.stagingColumns)) FROM STDIN (FORMAT binary)") { send in
            try Self.copyHeader.withUnsafeBytes { try send($0) }
            try buffer.withUnsafeBytes { try send($0) }
            try [UInt8(0xFF), 0xFF].withUnsafeBytes { try send($0) }  // trailer: field count -1
        }
        // Fast path: the chunk's new rows (not stored yet; of repeated rows the first) in one
        // plain INSERT — as fast as an INSERT without a conflict clause, and well ahead of
        // ON CONFLICT's speculative insertion of every row. A coordinator importing the same
        // record at the same moment makes it fail with a unique violation; the savepoint then
        // lets the chunk go again with ON CONFLICT DO NOTHING, which waits for and skips theirs.
        try connection.query("SAVEPOINT cohort_chunk")
        do {
            insertedCount += try connection.command(
                """
                INSERT INTO records (\(Self.recordColumns))
                SELECT DISTINCT ON (participant_pk, kind, start_ms, source)
                    participant_pk, kind, start_ms, start_offset, end_ms, end_offset, value, text, source, note_enc, \(batchID)
                FROM cohort_record_staging s
                WHERE NOT EXISTS (
                    SELECT 1 FROM records r
                    WHERE r.participant_pk = s.participant_pk AND r.kind = s.kind AND r.start_ms = s.start_ms AND r.source = s.source)
                ORDER BY participant_pk, kind, start_ms, source, ord
                """)
        } catch where PostgresConnection.sqlState(of: error) == "23505" {
            try connection.query("ROLLBACK TO SAVEPOINT cohort_chunk")
            insertedCount += try connection.command(
                """
                INSERT INTO records (\(Self.recordColumns))
                SELECT participant_pk, kind, start_ms, start_offset, end_ms, end_offset, value, text, source, note_enc, \(batchID)
                FROM cohort_record_staging ORDER BY ord ON CONFLICT DO NOTHING
                """)
        }
        try connection.query("RELEASE SAVEPOINT cohort_chunk")
        try connection.query("TRUNCATE cohort_record_staging")
    }

    private func sealedNote(_ record: CohortCore.Record, participantPK: Int64) throws -> [UInt8]? {
        guard let text = record.note, !text.isEmpty else { return nil }
        return try PIISealing.sealNote(
            text, key: piiKey, participantPK: participantPK, kind: record.kind.rawValue, startMs: record.start.epochMilliseconds,
            source: record.source ?? "")
    }

    // Binary COPY: each field is its length (int32, -1 for NULL) and its bytes, big-endian.

    private func append<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) }
    }

    private func null() { append(Int32(-1)) }

    private func field<T: FixedWidthInteger>(_ value: T) {
        append(Int32(MemoryLayout<T>.size))
        append(value)
    }

    private func field(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            append(Int32(utf8.count))
            buffer.append(contentsOf: utf8)
        }
    }
}
