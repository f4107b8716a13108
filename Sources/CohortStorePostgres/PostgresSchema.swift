/// The SQL of each PostgreSQL migration, applied in order and recorded in `cohort_migrations`.
/// Named and append-only: never edit one that has shipped, add a new one.
///
/// The tables mirror the SQLite store's (see `Sources/CohortStore/SQLite/Schema.swift`), with
/// PostgreSQL types (`bigint`, `double precision`, `bytea`, `jsonb` for audit details so
/// exports and withdrawals can be found by detail) and with `site` on participants for
/// multi-site studies (row-level security is a later migration).
enum PostgresSchema {
    /// Migrations by name, in order.
    static let migrations: [(name: String, sql: String)] = [
        ("v1-foundation", v1), ("v2-record-paths", v2RecordPaths), ("v3-site-security", v3SiteSecurity),
        ("v4-bulk-records", v4BulkRecords), ("v5-sharing-scopes", v5SharingScopes), ("v6-server-audit", v6ServerAudit),
        ("v7-owner-actions", v7OwnerActions), ("v8-site-data-keys", v8SiteDataKeys),
    ]

    static let v1 = """
        CREATE TABLE study (
            singleton integer PRIMARY KEY CHECK (singleton = 1),
            study_id text NOT NULL,
            created_at text NOT NULL
        );
        CREATE TABLE protocol_revisions (
            sha256 text PRIMARY KEY CHECK (length(sha256) = 64),
            study_id text NOT NULL,
            revision integer NOT NULL CHECK (revision >= 1),
            canonical_json bytea NOT NULL,
            source_path text,
            loaded_at text NOT NULL,
            is_current boolean NOT NULL DEFAULT false,
            loaded_order bigserial
        );
        CREATE UNIQUE INDEX protocol_revisions_current ON protocol_revisions(is_current) WHERE is_current;
        CREATE TABLE templates (
            protocol_sha256 text NOT NULL REFERENCES protocol_revisions(sha256),
            path text NOT NULL,
            sha256 text NOT NULL,
            content bytea NOT NULL,
            PRIMARY KEY (protocol_sha256, path)
        );
        CREATE TABLE participants (
            pk bigserial PRIMARY KEY,
            id uuid NOT NULL UNIQUE,
            code text NOT NULL UNIQUE,
            site text CHECK (site IS NULL OR length(site) BETWEEN 1 AND 64),
            sex text NOT NULL CHECK (sex IN ('female', 'male', 'other', 'unknown')),
            time_zone text NOT NULL,
            enrolled_on text NOT NULL,
            status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'stopped', 'excluded', 'erased')),
            withdrawn_at_ms bigint,
            withdrawn_offset integer,
            name_enc bytea, email_enc bytea, phone_enc bytea, birth_date_enc bytea, address_enc bytea,
            zip_enc bytea, mrn_enc bytea, devices_enc bytea,
            token_salt bytea,
            token_hash bytea,
            created_at text NOT NULL
        );
        CREATE TABLE consents (
            id uuid PRIMARY KEY,
            participant_pk bigint NOT NULL REFERENCES participants(pk),
            version text NOT NULL,
            document_sha256 text NOT NULL CHECK (length(document_sha256) = 64),
            signed_at_ms bigint NOT NULL,
            signed_offset integer NOT NULL,
            signature_kind text NOT NULL CHECK (signature_kind IN ('typed', 'drawn', 'wet-ink')),
            signature_enc bytea,
            sharing text NOT NULL CHECK (sharing IN ('broad', 'study-only')),
            status text NOT NULL CHECK (status IN ('active', 'superseded', 'withdrawn')),
            recorded_at_ms bigint NOT NULL,
            recorded_offset integer NOT NULL,
            recorded_order bigserial
        );
        CREATE INDEX consents_participant ON consents(participant_pk);
        CREATE TABLE withdrawals (
            id uuid PRIMARY KEY,
            participant_pk bigint NOT NULL REFERENCES participants(pk),
            mode text NOT NULL CHECK (mode IN ('stop', 'exclude', 'erase')),
            at_ms bigint NOT NULL,
            by_kind text NOT NULL CHECK (by_kind IN ('participant', 'staff')),
            actor text NOT NULL,
            reason text,
            consent_version text,
            counts_json text NOT NULL,
            recorded_order bigserial
        );
        CREATE INDEX withdrawals_participant ON withdrawals(participant_pk);
        CREATE TABLE import_batches (
            id bigserial PRIMARY KEY,
            file_name text NOT NULL,
            file_sha256 text NOT NULL,
            format text NOT NULL,
            imported_at text NOT NULL,
            actor text NOT NULL,
            rows_total bigint NOT NULL DEFAULT 0,
            rows_inserted bigint NOT NULL DEFAULT 0,
            rows_duplicate bigint NOT NULL DEFAULT 0,
            rows_rejected bigint NOT NULL DEFAULT 0
        );
        CREATE TABLE records (
            id bigserial PRIMARY KEY,
            participant_pk bigint NOT NULL REFERENCES participants(pk),
            kind text NOT NULL,
            start_ms bigint NOT NULL,
            start_offset integer NOT NULL,
            end_ms bigint,
            end_offset integer,
            value double precision,
            text text,
            source text NOT NULL DEFAULT '',
            note_enc bytea,
            batch_id bigint REFERENCES import_batches(id),
            CHECK (end_ms IS NULL OR end_ms >= start_ms),
            UNIQUE (participant_pk, kind, start_ms, source)
        );
        CREATE TABLE audit_events (
            seq bigint PRIMARY KEY CHECK (seq >= 1),
            at text NOT NULL,
            actor text NOT NULL,
            action text NOT NULL,
            subject text,
            details jsonb NOT NULL,
            details_text text NOT NULL,
            prev_hash text NOT NULL,
            hash text NOT NULL
        );
        CREATE INDEX audit_events_action ON audit_events(action);
        CREATE TABLE audit_checkpoints (
            seq bigint PRIMARY KEY,
            head_hash text NOT NULL,
            signature text NOT NULL,
            at text NOT NULL
        );
        CREATE TABLE redactable_texts (
            digest text PRIMARY KEY CHECK (length(digest) = 64),
            participant_id text,
            salt bytea NOT NULL CHECK (length(salt) = 16),
            text_enc bytea NOT NULL
        );
        CREATE INDEX redactable_texts_participant ON redactable_texts(participant_id) WHERE participant_id IS NOT NULL;
        """

    /// The read path of one participant's records (`forEachRecord`: `WHERE participant_pk = …
    /// ORDER BY start_ms, kind, source`) as one index range scan already in output order, so a
    /// server-side cursor streams from the first row without sorting the participant's records
    /// first (the unique key leads with participant and kind, not start). Byte-order collation,
    /// as the query asks, so the order is SQLite's whatever the database's collation is.
    static let v2RecordPaths = """
        CREATE INDEX records_participant_start ON records (participant_pk, start_ms, kind COLLATE "C", source COLLATE "C");
        """

    /// Migration `v5-sharing-scopes`: a protocol may define sharing scopes beyond `broad` and
    /// `study-only` (`consent.sharing_scopes`), so the column takes any scope name.
    static let v5SharingScopes = """
        ALTER TABLE consents DROP CONSTRAINT consents_sharing_check;
        ALTER TABLE consents ADD CONSTRAINT consents_sharing_check CHECK (sharing ~ '^[a-z][a-z0-9-]{0,31}$');
        """

    /// Migration `v4-bulk-records`: a record costs an import one heap row and one b-tree entry.
    ///
    /// Measured on 1M rows COPYed into `records` (docs/performance.md): 9.9 s with v1–v3's three
    /// b-trees (the `id` key, the unique key, the read path) and two foreign keys, each checked
    /// by a lookup per row; 3.5 s without the foreign keys; 1.4–1.6 s with one b-tree. So:
    /// - The unique key becomes the primary key, its columns in the read path's order
    ///   (participant, start, kind, source): uniqueness does not depend on the order, so one
    ///   index both refuses a duplicate and serves `forEachRecord` without a sort, and rows of a
    ///   file written participant by participant, in time, land at the index's right edge.
    /// - `kind` and `source` use the byte-order collation `"C"`, the order SQLite uses, so the
    ///   index needs no `COLLATE` clause to serve that order whatever the database's collation.
    /// - The foreign keys go: the import locks the participants of each chunk `FOR KEY SHARE`
    ///   itself (the lock the foreign key took, which makes an erase wait for the import) and
    ///   checks they exist; a batch is made by the transaction that writes its records.
    /// - `id` stays, for naming a row in an error, with no index and a sequence cache.
    static let v4BulkRecords = """
        ALTER TABLE records DROP CONSTRAINT records_participant_pk_fkey;
        ALTER TABLE records DROP CONSTRAINT records_batch_id_fkey;
        DROP INDEX records_participant_start;
        ALTER TABLE records DROP CONSTRAINT records_participant_pk_kind_start_ms_source_key;
        ALTER TABLE records DROP CONSTRAINT records_pkey;
        ALTER TABLE records ALTER COLUMN kind TYPE text COLLATE "C", ALTER COLUMN source TYPE text COLLATE "C";
        ALTER TABLE records ADD CONSTRAINT records_key PRIMARY KEY (participant_pk, start_ms, kind, source);
        ALTER SEQUENCE records_id_seq CACHE 1000;
        """
}
