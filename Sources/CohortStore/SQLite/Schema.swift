/// The SQL of each migration. Constraints live in the schema, not only in Swift.
enum Schema {
    static let v1 = """
        CREATE TABLE study (
            singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
            study_id TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE TABLE protocol_revisions (
            sha256 TEXT PRIMARY KEY CHECK (length(sha256) = 64),
            study_id TEXT NOT NULL,
            revision INTEGER NOT NULL CHECK (revision >= 1),
            canonical_json BLOB NOT NULL,
            source_path TEXT,
            loaded_at TEXT NOT NULL,
            is_current INTEGER NOT NULL DEFAULT 0 CHECK (is_current IN (0, 1))
        );
        CREATE UNIQUE INDEX protocol_revisions_current ON protocol_revisions(is_current) WHERE is_current = 1;
        CREATE TABLE templates (
            protocol_sha256 TEXT NOT NULL REFERENCES protocol_revisions(sha256),
            path TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            content BLOB NOT NULL,
            PRIMARY KEY (protocol_sha256, path)
        );
        CREATE TABLE participants (
            pk INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            code TEXT NOT NULL UNIQUE,
            sex TEXT NOT NULL CHECK (sex IN ('female', 'male', 'other', 'unknown')),
            time_zone TEXT NOT NULL,
            enrolled_on TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'stopped', 'excluded', 'erased')),
            withdrawn_at_ms INTEGER,
            withdrawn_offset INTEGER,
            name_enc BLOB, email_enc BLOB, phone_enc BLOB, birth_date_enc BLOB, address_enc BLOB,
            zip_enc BLOB, mrn_enc BLOB, devices_enc BLOB,
            token_salt BLOB,
            token_hash BLOB,
            created_at TEXT NOT NULL
        );
        CREATE TABLE consents (
            id TEXT PRIMARY KEY,
            participant_pk INTEGER NOT NULL REFERENCES participants(pk),
            version TEXT NOT NULL,
            document_sha256 TEXT NOT NULL CHECK (length(document_sha256) = 64),
            signed_at_ms INTEGER NOT NULL,
            signed_offset INTEGER NOT NULL,
            signature_kind TEXT NOT NULL CHECK (signature_kind IN ('typed', 'drawn', 'wet-ink')),
            signature_enc BLOB,
            sharing TEXT NOT NULL CHECK (sharing IN ('broad', 'study-only')),
            status TEXT NOT NULL CHECK (status IN ('active', 'superseded', 'withdrawn')),
            recorded_at_ms INTEGER NOT NULL,
            recorded_offset INTEGER NOT NULL
        );
        CREATE INDEX consents_participant ON consents(participant_pk);
        CREATE TABLE withdrawals (
            id TEXT PRIMARY KEY,
            participant_pk INTEGER NOT NULL REFERENCES participants(pk),
            mode TEXT NOT NULL CHECK (mode IN ('stop', 'exclude', 'erase')),
            at_ms INTEGER NOT NULL,
            by_kind TEXT NOT NULL CHECK (by_kind IN ('participant', 'staff')),
            actor TEXT NOT NULL,
            reason TEXT,
            consent_version TEXT,
            counts_json TEXT NOT NULL
        );
        CREATE TABLE import_batches (
            id INTEGER PRIMARY KEY,
            file_name TEXT NOT NULL,
            file_sha256 TEXT NOT NULL,
            format TEXT NOT NULL,
            imported_at TEXT NOT NULL,
            actor TEXT NOT NULL,
            rows_total INTEGER NOT NULL DEFAULT 0,
            rows_inserted INTEGER NOT NULL DEFAULT 0,
            rows_duplicate INTEGER NOT NULL DEFAULT 0,
            rows_rejected INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE records (
            id INTEGER PRIMARY KEY,
            participant_pk INTEGER NOT NULL REFERENCES participants(pk),
            kind TEXT NOT NULL,
            start_ms INTEGER NOT NULL,
            start_offset INTEGER NOT NULL,
            end_ms INTEGER,
            end_offset INTEGER,
            value REAL,
            text TEXT,
            source TEXT NOT NULL DEFAULT '',
            note TEXT,
            batch_id INTEGER REFERENCES import_batches(id),
            CHECK (end_ms IS NULL OR end_ms >= start_ms),
            UNIQUE (participant_pk, kind, start_ms, source)
        );
        CREATE TABLE audit_events (
            seq INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            actor TEXT NOT NULL,
            action TEXT NOT NULL,
            subject TEXT,
            details TEXT NOT NULL,
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL
        );
        CREATE TABLE audit_checkpoints (
            seq INTEGER PRIMARY KEY,
            head_hash TEXT NOT NULL,
            signature TEXT NOT NULL,
            at TEXT NOT NULL
        );
        """

    /// Free text at rest: notes move to `records.note_enc` (AES-256-GCM under pii.key), and texts
    /// that may hold personal data (staff reasons, actor names) live in `redactable_texts`, where
    /// the audit chain commits only to their salted SHA-256 — so erase can delete them.
    static let v2 = """
        ALTER TABLE records ADD COLUMN note_enc BLOB;
        CREATE TABLE redactable_texts (
            digest TEXT PRIMARY KEY CHECK (length(digest) = 64),
            participant_id TEXT,
            salt BLOB NOT NULL CHECK (length(salt) = 16),
            text_enc BLOB NOT NULL
        );
        CREATE INDEX redactable_texts_participant ON redactable_texts(participant_id) WHERE participant_id IS NOT NULL;
        """

    /// Multi-site studies: a participant's site (nil in a single-site study). The SQLite store has
    /// one user, so sites there only label and filter; PostgreSQL enforces them with row-level
    /// security.
    static let v3 = """
        ALTER TABLE participants ADD COLUMN site TEXT CHECK (site IS NULL OR length(site) BETWEEN 1 AND 64);
        """

    /// Migration `v4-sharing-scopes`: a protocol may define sharing scopes beyond `broad` and
    /// `study-only` (`consent.sharing_scopes`), so the column takes any scope name. SQLite cannot
    /// change a CHECK constraint, so the table is rebuilt (nothing references it).
    static let v4 = """
        CREATE TABLE consents_v4 (
            id TEXT PRIMARY KEY,
            participant_pk INTEGER NOT NULL REFERENCES participants(pk),
            version TEXT NOT NULL,
            document_sha256 TEXT NOT NULL CHECK (length(document_sha256) = 64),
            signed_at_ms INTEGER NOT NULL,
            signed_offset INTEGER NOT NULL,
            signature_kind TEXT NOT NULL CHECK (signature_kind IN ('typed', 'drawn', 'wet-ink')),
            signature_enc BLOB,
            sharing TEXT NOT NULL CHECK (length(sharing) BETWEEN 1 AND 32 AND sharing NOT GLOB '*[^a-z0-9-]*' AND sharing GLOB '[a-z]*'),
            status TEXT NOT NULL CHECK (status IN ('active', 'superseded', 'withdrawn')),
            recorded_at_ms INTEGER NOT NULL,
            recorded_offset INTEGER NOT NULL
        );
        INSERT INTO consents_v4 (id, participant_pk, version, document_sha256, signed_at_ms, signed_offset, signature_kind, signature_enc, sharing, status, recorded_at_ms, recorded_offset)
            SELECT id, participant_pk, version, document_sha256, signed_at_ms, signed_offset, signature_kind, signature_enc, sharing, status, recorded_at_ms, recorded_offset FROM consents;
        DROP TABLE consents;
        ALTER TABLE consents_v4 RENAME TO consents;
        CREATE INDEX consents_participant ON consents(participant_pk);
        """

    /// Migration `v5-no-plaintext-note`: the v1 plaintext `records.note` column, which v2 emptied
    /// (every note moved to `note_enc`) and nothing has written since, is dropped — free text has
    /// no plaintext column left, and SQLite's tables are PostgreSQL's (StoreSchemaParityTests).
    static let v5 = """
        ALTER TABLE records DROP COLUMN note;
        """

    /// Migration `v6-records-by-key`: `records` is clustered on its unique key (`WITHOUT ROWID`,
    /// primary key participant, kind, start, source) — one b-tree instead of a table and an index
    /// beside it. An import inserts each row into one b-tree, not two, and the export reads a
    /// participant's records of a kind in key order from the rows themselves, not from an index
    /// and then the table (issue 28: 30–40 % less of SQLite's time per imported row on the
    /// benchmark's study, and a database about 40 % smaller). The rows lose the `id` they had
    /// only as SQLite's rowid; nothing referred to it (errors now name a row by its participant
    /// row). The columns, constraints and foreign keys are otherwise as they were; the rows are
    /// copied in key order.
    static let v6 = """
        CREATE TABLE records_v6 (
            participant_pk INTEGER NOT NULL REFERENCES participants(pk),
            kind TEXT NOT NULL,
            start_ms INTEGER NOT NULL,
            start_offset INTEGER NOT NULL,
            end_ms INTEGER,
            end_offset INTEGER,
            value REAL,
            text TEXT,
            source TEXT NOT NULL DEFAULT '',
            batch_id INTEGER REFERENCES import_batches(id),
            note_enc BLOB,
            CHECK (end_ms IS NULL OR end_ms >= start_ms),
            PRIMARY KEY (participant_pk, kind, start_ms, source)
        ) WITHOUT ROWID;
        INSERT INTO records_v6 (participant_pk, kind, start_ms, start_offset, end_ms, end_offset, value, text, source, batch_id, note_enc)
            SELECT participant_pk, kind, start_ms, start_offset, end_ms, end_offset, value, text, source, batch_id, note_enc FROM records
            ORDER BY participant_pk, kind, start_ms, source;
        DROP TABLE records;
        ALTER TABLE records_v6 RENAME TO records;
        """
}
