public import CohortCore
import CohortPostgres
public import CohortStore
import Foundation

/// Stores an import's records on PostgreSQL, inside the import's transaction, through COPY.
///
/// The hot path of `cohort data import` on PostgreSQL. `add` encodes each row in PostgreSQL's
/// binary COPY format (no text escaping to get wrong: every value is sent as its length and its
/// bytes) and streams it to the server as it goes, so the server stores one chunk while cohort
/// reads and checks the next rows of the file: the two run on two cores.
///
/// A row that repeats an earlier row of the same chunk (same participant, kind, start and
/// source: a clock change makes two local hours one instant) is dropped on the spot, as a
/// duplicate — the first one wins, as on SQLite. A chunk (``chunkRows`` rows) then goes one of
/// two ways:
/// - **Directly into `records`**, under a savepoint, when the role is not subject to row-level
///   security (PostgreSQL's COPY FROM refuses a table whose policies apply). A new record costs
///   the server one heap row and one b-tree entry (migration `v4-bulk-records`). If a row of the
///   chunk is already stored — a re-import, a row repeated from an earlier chunk, or another
///   coordinator storing the same record at the same moment — the primary key refuses the COPY;
///   the chunk is rolled back to its savepoint and goes the second way. The next chunk tries the
///   direct way again (a re-import fails at its first row, so trying costs little).
/// - **Through a staging table** (temporary, `ON COMMIT DROP`, emptied after each chunk): COPY
///   into it, then one `INSERT … SELECT` of the rows not stored yet, whose row count is the
///   number of new records. A duplicate of a stored record, or of an earlier row of the same
///   file, is skipped, and of repeated rows the first one wins, as on SQLite. When another
///   coordinator stores one of the chunk's records at that moment, the chunk goes again with
///   `ON CONFLICT DO NOTHING`, which waits for and skips theirs.
///
/// Records carry no foreign key (it cost a lookup per row). Instead, after each chunk, the
/// participants it wrote that this import has not locked yet are locked `FOR KEY SHARE` — the
/// lock a foreign key takes — and must all be there: an erase (`SELECT … FOR UPDATE` on the
/// participant) waits for the import to commit and then removes what it stored, and an erase
/// that got there first is seen by the import's withdrawal check at commit.
///
/// `insert` (one row, answering whether it was new) writes the queued rows first, then runs one
/// `INSERT … ON CONFLICT DO NOTHING`.
///
/// A non-empty note is sealed (AES-256-GCM under pii.key, associated data naming the record's
/// unique key and the field, as on SQLite) before it is queued: the server never sees it.
public final class PostgresRecordSink: StoreRecordSink {
    /// Rows per chunk (the unit of fallback and of the participant lock).
    static let chunkRows = 50_000
    /// Encoded bytes handed to libpq at a time while a chunk streams.
    static let sendBytes = 256 << 10
    /// Columns of a COPY, in order (the staging table has the same, after its `ord`).
    static let recordColumns = "participant_pk, kind, start_ms, start_offset, end_ms, end_offset, value, text, source, note_enc, batch_id"
    /// The binary COPY header: signature, flags, header-extension length.
    static let copyHeader: [UInt8] = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00] + [0, 0, 0, 0] + [0, 0, 0, 0]
    /// The binary COPY trailer: field count -1.
    static let copyTrailer: [UInt8] = [0xFF, 0xFF]

    let connection: PostgresConnection
    let batchID: Int64
    /// The keys notes are sealed with: the data key of the participant's site.
    let keys: PIIKeyRing
    /// Each participant's site, looked up once per import (per-site data keys only).
    private var sites: [Int64: String?] = [:]
    /// The binary COPY tuples of the chunk being queued (kept whole for a fallback).
    private var buffer: [UInt8] = []
    /// How many bytes of `buffer` the open direct COPY has been sent.
    private var sent = 0
    private var queued = 0
    /// Whether chunks go directly into `records` (see the type's comment).
    private let direct: Bool
    /// The keys of the chunk's rows, to drop a row that repeats one of them.
    private var chunkKeys = Set<RecordKey>()
    /// Whether a direct COPY is open (between a chunk's first row and its end).
    private var copying = false
    private var stagingMade = false
    /// The participants this import holds a lock on (of those `imported` wrote).
    private var locked = Set<Int64>()
    /// Rows `add` has stored so far (duplicates not counted). Complete after `flush()`.
    public private(set) var insertedCount = 0
    /// The participants written, for the withdrawal check at commit.
    package private(set) var imported = ImportedParticipants()
    /// How many chunks went through the staging table (for tests).
    public private(set) var stagedChunks = 0

    /// Call inside the import's transaction.
    init(connection: PostgresConnection, batchID: Int64, keys: PIIKeyRing) throws {
        self.connection = connection
        self.batchID = batchID
        self.keys = keys
        let secured = try connection.query("SELECT row_security_active('records')").first?.first ?? nil
        direct = secured == "f"
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
        try lockNewParticipants()
        return changed > 0
    }

    /// Queues `record` for `participant`; rows stream to the server a chunk at a time. Call
    /// `flush()` after the last one, then read `insertedCount`.
    public func add(_ record: CohortCore.Record, participant: ParticipantHandle) throws {
        let pk = participant.rowKey
        imported.note(pk, startMs: record.start.epochMilliseconds)
        guard chunkKeys.insert(RecordKey(participantPK: pk, startMs: record.start.epochMilliseconds, kind: record.kind, source: record.source ?? "")).inserted
        else { return }
        let note = try sealedNote(record, participantPK: pk)
        append(Int16(11))
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
        field(batchID)
        queued += 1
        if direct {
            if !copying {
                try connection.query("SAVEPOINT cohort_chunk")
                try connection.beginCopyIn("COPY records (\(Self.recordColumns)) FROM STDIN (FORMAT binary)")
                copying = true
                try Self.copyHeader.withUnsafeBytes { try connection.putCopyData($0) }
            }
            if buffer.count - sent >= Self.sendBytes { try sendBuffered() }
        }
        if queued >= Self.chunkRows { try flush() }
    }

    /// Writes every queued row, then locks their participants.
    public func flush() throws {
        defer {
            buffer.removeAll(keepingCapacity: true)
            chunkKeys.removeAll(keepingCapacity: true)
            sent = 0
            queued = 0
        }
        var stored: Int?
        if copying {
            copying = false
            do {
                try sendBuffered()
                try Self.copyTrailer.withUnsafeBytes { try connection.putCopyData($0) }
                stored = try connection.endCopyIn()
            } catch where PostgresConnection.sqlState(of: error) == "23505" {
                // A row of the chunk is stored already: this chunk goes the careful way.
                try connection.query("ROLLBACK TO SAVEPOINT cohort_chunk")
            }
            try connection.query("RELEASE SAVEPOINT cohort_chunk")
            if let stored { insertedCount += stored }
        }
        if queued > 0, stored == nil { try stage() }
        try lockNewParticipants()
    }

    /// Ends an open COPY without keeping it, when the import failed before `flush()`: the
    /// connection must be out of COPY mode for the transaction to roll back.
    package func abandon() {
        guard copying else { return }
        copying = false
        _ = try? connection.endCopyIn(abortingWith: "the import was refused")
    }

    /// Hands libpq the bytes of the open COPY not sent yet.
    private func sendBuffered() throws {
        guard buffer.count > sent else { return }
        try buffer.withUnsafeBytes { try connection.putCopyData(UnsafeRawBufferPointer(rebasing: $0[sent...])) }
        sent = buffer.count
    }

    /// The queued chunk through the staging table (see the type's comment).
    private func stage() throws {
        if !stagingMade {
            try connection.query(
                """
                CREATE TEMP TABLE cohort_record_staging (
                    ord bigint GENERATED ALWAYS AS IDENTITY, participant_pk bigint NOT NULL, kind text COLLATE "C" NOT NULL,
                    start_ms bigint NOT NULL, start_offset integer NOT NULL, end_ms bigint, end_offset integer,
                    value double precision, text text, source text COLLATE "C" NOT NULL, note_enc bytea, batch_id bigint NOT NULL
                ) ON COMMIT DROP
                """)
            // The chunk's ORDER BY sorts in memory rather than on disk.
            try connection.query("SET LOCAL work_mem = '64MB'")
            stagingMade = true
        }
        stagedChunks += 1
        try connection.copyIn("COPY cohort_record_staging (\(Self.recordColumns)) FROM STDIN (FORMAT binary)") { send in
            try Self.copyHeader.withUnsafeBytes { try send($0) }
            try buffer.withUnsafeBytes { try send($0) }
            try Self.copyTrailer.withUnsafeBytes { try send($0) }
        }
        // The chunk's new rows (not stored yet; of repeated rows the first) in one plain INSERT —
        // well ahead of ON CONFLICT's speculative insertion of every row. A coordinator importing
        // the same record at the same moment makes it fail with a unique violation; the savepoint
        // then lets the chunk go again with ON CONFLICT DO NOTHING, which waits for and skips theirs.
        // The anti-join probes the primary key once per staged row: left to itself the planner
        // may merge-join against a sort of the whole table, whose cost grows with the study
        // (measured: 0.4 s → 0.85 s per chunk while `records` grew to 1M rows).
        try connection.query("SET LOCAL enable_mergejoin = off")
        try connection.query("SET LOCAL enable_hashjoin = off")
        defer {
            _ = try? connection.query("SET LOCAL enable_mergejoin = on")
            _ = try? connection.query("SET LOCAL enable_hashjoin = on")
        }
        try connection.query("SAVEPOINT cohort_chunk")
        do {
            insertedCount += try connection.command(
                """
                INSERT INTO records (\(Self.recordColumns))
                SELECT DISTINCT ON (participant_pk, start_ms, kind, source) \(Self.recordColumns)
                FROM cohort_record_staging s
                WHERE NOT EXISTS (
                    SELECT 1 FROM records r
                    WHERE r.participant_pk = s.participant_pk AND r.start_ms = s.start_ms AND r.kind = s.kind AND r.source = s.source)
                ORDER BY participant_pk, start_ms, kind, source, ord
                """)
        } catch where PostgresConnection.sqlState(of: error) == "23505" {
            try connection.query("ROLLBACK TO SAVEPOINT cohort_chunk")
            insertedCount += try connection.command(
                "INSERT INTO records (\(Self.recordColumns)) SELECT \(Self.recordColumns) FROM cohort_record_staging ORDER BY ord ON CONFLICT DO NOTHING")
        }
        try connection.query("RELEASE SAVEPOINT cohort_chunk")
        try connection.query("TRUNCATE cohort_record_staging")
    }

    /// Locks `FOR KEY SHARE` the participants this import wrote and has not locked yet; each
    /// must be there (and, under row-level security, be this role's to see).
    private func lockNewParticipants() throws {
        let toLock = Set(imported.latestStart.keys).subtracting(locked)
        guard !toLock.isEmpty else { return }
        let list = "{" + toLock.map(String.init).joined(separator: ",") + "}"
        let found = try connection.query(
            "SELECT count(*) FROM (SELECT pk FROM participants WHERE pk = ANY($1::bigint[]) FOR KEY SHARE) p", [list])
        guard (found.first?.first ?? nil).flatMap({ Int($0) }) == toLock.count else {
            throw CohortError(
                .integrity, "a participant of this import is not in the study's database (or not this database role's to see)",
                hint: "import again; if it persists, check `cohort participant list` and the role's site grants (`cohort site grant`)")
        }
        locked.formUnion(toLock)
    }

    private func sealedNote(_ record: CohortCore.Record, participantPK: Int64) throws -> [UInt8]? {
        guard let text = record.note, !text.isEmpty else { return nil }
        return try PIISealing.sealNote(
            text, key: try key(participantPK: participantPK), participantPK: participantPK, kind: record.kind.rawValue, startMs: record.start.epochMilliseconds,
            source: record.source ?? "")
    }

    /// The key that seals a note of participant `participantPK`: its site's data key.
    private func key(participantPK: Int64) throws -> [UInt8] {
        guard !keys.siteKeys.isEmpty else { return keys.defaultKey }
        if let site = sites[participantPK] { return keys.key(forSite: site) }
        let site = try connection.query("SELECT site FROM participants WHERE pk = $1", values: [.int(participantPK)]).first?.first ?? nil
        sites[participantPK] = site
        return keys.key(forSite: site)
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

/// A record's unique key in the store (participant, start, kind, source).
struct RecordKey: Hashable {
    let participantPK: Int64
    let startMs: Int64
    let kind: RecordKind
    let source: String
}
