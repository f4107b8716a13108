extension PostgresSchema {
    /// Migration `v6-server-audit`: the server writes the audit trail, and a site role holds no
    /// privilege it does not need (issue #30).
    ///
    /// - **Events** are appended only by `cohort_append_event` (`SECURITY DEFINER`, fixed
    ///   `search_path`): it takes the chain's lock (a `SHARE ROW EXCLUSIVE` lock on
    ///   `audit_events`, which no site role can take or hold outside the function), reads the
    ///   head, numbers and links the event, adds the login role that appends (`session_user`) as
    ///   `details.db_role`, and computes the hash over the same canonical encoding as
    ///   `AuditEvent.hashInput` (prev hash ‖ JSON with sorted keys, `/` unescaped, control
    ///   characters as `\b \t \n \f \r` or `\u00xx`), so `audit verify` recomputes it in Swift
    ///   by the route it always used. The function refuses what could make the chain unverifiable
    ///   (an instant or action in another form, a details value that is not text, a key outside
    ///   printable ASCII — key order must be byte order in both languages — or one the server owns).
    ///   A session holding the lock that sits idle in its transaction for 10 s is ended by the
///   server (`idle_in_transaction_session_timeout`, set for the rest of the transaction), so a
///   site that appends in psql and walks away stalls the others for 10 s, not for ever.
/// - **Checkpoints** are stored only by `cohort_append_checkpoint`: the head's hash comes from
    ///   the chain, not from the caller, and `written_by` records the login role.
    /// - **Deletes** of records and of redactable texts happen only in an erase, through
    ///   `cohort_erase_records` / `cohort_erase_redactable`, for a participant whose status is
    ///   already `erased` and whose site the login role belongs to; texts about no participant
    ///   (actor names) cannot be deleted by a site at all.
    /// - **Privileges** (`cohort_grant_site_privileges`, run here for every existing site group
    ///   and by `cohort site add/grant`): SELECT on everything; INSERT where rows are added;
    ///   UPDATE only on the columns a withdrawal or an import's counts change (a column grant
    ///   lets no one `LOCK TABLE` in a blocking mode, a table-level UPDATE or DELETE would); no
    ///   write at all on the audit tables, `protocol_revisions`, `templates` and `study`.
    static let v6ServerAudit = """
        ALTER TABLE audit_checkpoints ADD COLUMN written_by text;

        CREATE FUNCTION cohort_json_string(t text) RETURNS text
            LANGUAGE plpgsql IMMUTABLE STRICT
            AS $$
            DECLARE
                escaped text := '';
                c text;
                n integer;
            BEGIN
                -- Backslash and quote as chr(92), chr(34): no string literal here depends on standard_conforming_strings.
                IF t !~ '[[:cntrl:]]' AND strpos(t, chr(34)) = 0 AND strpos(t, chr(92)) = 0 THEN
                    RETURN chr(34) || t || chr(34);
                END IF;
                FOR i IN 1 .. length(t) LOOP
                    c := substr(t, i, 1);
                    n := ascii(c);
                    escaped := escaped || CASE
                        WHEN n = 34 OR n = 92 THEN chr(92) || c
                        WHEN n = 8 THEN chr(92) || 'b'
                        WHEN n = 9 THEN chr(92) || 't'
                        WHEN n = 10 THEN chr(92) || 'n'
                        WHEN n = 12 THEN chr(92) || 'f'
                        WHEN n = 13 THEN chr(92) || 'r'
                        WHEN n < 32 THEN chr(92) || 'u00' || lpad(to_hex(n), 2, '0')
                        ELSE c END;
                END LOOP;
                RETURN chr(34) || escaped || chr(34);
            END
            $$;

        CREATE FUNCTION cohort_lock_audit_chain() RETURNS void
            LANGUAGE plpgsql SECURITY DEFINER
            AS $$
            BEGIN
                LOCK TABLE audit_events IN SHARE ROW EXCLUSIVE MODE;
                -- Whoever holds the chain's lock and then waits on its client more than 10 s loses its session (and the lock):
                -- cohort commits within milliseconds; a psql session left open after an append would stall every other site.
                PERFORM set_config('idle_in_transaction_session_timeout', '10s', true);
            END
            $$;

        CREATE FUNCTION cohort_append_event(p_at text, p_actor text, p_action text, p_subject text, p_details jsonb,
            OUT o_seq bigint, OUT o_prev_hash text, OUT o_hash text, OUT o_db_role text)
            LANGUAGE plpgsql SECURITY DEFINER
            AS $$
            DECLARE
                head record;
                d jsonb;
                d_text text;
                body text;
            BEGIN
                IF p_at IS NULL OR p_at !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})$' THEN
                    RAISE EXCEPTION 'cohort: an audit event''s instant must be ISO 8601 (YYYY-MM-DDTHH:MM:SS.fffZ)' USING ERRCODE = '22023';
                END IF;
                IF p_action IS NULL OR p_action !~ '^[a-z][a-z0-9_.-]{0,63}$' THEN
                    RAISE EXCEPTION 'cohort: an audit event''s action must be lower-case letters, digits, dots, dashes and underscores' USING ERRCODE = '22023';
                END IF;
                IF p_actor IS NULL OR p_subject IS NOT NULL AND length(p_subject) > 200 THEN
                    RAISE EXCEPTION 'cohort: an audit event needs an actor, and a subject of at most 200 characters' USING ERRCODE = '22023';
                END IF;
                IF p_details IS NULL OR jsonb_typeof(p_details) <> 'object' OR p_details ? 'db_role'
                    OR EXISTS (SELECT 1 FROM jsonb_each(p_details) e WHERE jsonb_typeof(e.value) <> 'string' OR e.key !~ '^[ -~]{1,64}$') THEN
                    RAISE EXCEPTION 'cohort: an audit event''s details must map printable ASCII keys (not db_role) to text' USING ERRCODE = '22023';
                END IF;
                d := p_details || jsonb_build_object('db_role', session_user::text);
                PERFORM cohort_lock_audit_chain();
                SELECT e.seq, e.hash INTO head FROM audit_events e ORDER BY e.seq DESC LIMIT 1;
                o_seq := coalesce(head.seq, 0) + 1;
                o_prev_hash := coalesce(head.hash, repeat('0', 64));
                o_db_role := session_user::text;
                SELECT '{' || string_agg(cohort_json_string(e.key) || ':' || cohort_json_string(e.value), ',' ORDER BY e.key COLLATE "C") || '}'
                    INTO d_text FROM jsonb_each_text(d) e;
                body := '{"action":' || cohort_json_string(p_action) || ',"actor":' || cohort_json_string(p_actor) || ',"at":' || cohort_json_string(p_at)
                    || ',"details":' || d_text || ',"seq":' || o_seq::text || ',"subject":' || coalesce(cohort_json_string(p_subject), 'null') || '}';
                o_hash := encode(sha256(convert_to(o_prev_hash || body, 'UTF8')), 'hex');
                INSERT INTO audit_events (seq, at, actor, action, subject, details, details_text, prev_hash, hash)
                    VALUES (o_seq, p_at, p_actor, p_action, p_subject, d, d_text, o_prev_hash, o_hash);
            END
            $$;

        CREATE FUNCTION cohort_append_checkpoint(p_seq bigint, p_signature text, p_at text) RETURNS void
            LANGUAGE plpgsql SECURITY DEFINER
            AS $$
            DECLARE
                head record;
            BEGIN
                IF p_signature IS NULL OR p_signature !~ '^[A-Za-z0-9+/]{86}==$' THEN
                    RAISE EXCEPTION 'cohort: a checkpoint''s signature must be a base64 Ed25519 signature' USING ERRCODE = '22023';
                END IF;
                IF p_at IS NULL OR p_at !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})$' THEN
                    RAISE EXCEPTION 'cohort: a checkpoint''s instant must be ISO 8601' USING ERRCODE = '22023';
                END IF;
                PERFORM cohort_lock_audit_chain();
                SELECT e.seq, e.hash INTO head FROM audit_events e ORDER BY e.seq DESC LIMIT 1;
                IF head.seq IS NULL OR head.seq <> p_seq THEN
                    RAISE EXCEPTION 'cohort: a checkpoint signs the chain''s head' USING ERRCODE = '22023';
                END IF;
                INSERT INTO audit_checkpoints (seq, head_hash, signature, at, written_by)
                    VALUES (p_seq, head.hash, p_signature, p_at, session_user::text) ON CONFLICT (seq) DO NOTHING;
            END
            $$;

        CREATE FUNCTION cohort_session_acts_for(p_site text) RETURNS boolean
            LANGUAGE sql STABLE
            AS $$
                -- The owner of the tables (or a member of the owning role; superusers are members of every role) acts for every site.
                SELECT pg_has_role(session_user, (SELECT c.relowner FROM pg_class c WHERE c.oid = 'participants'::regclass), 'MEMBER')
                    OR EXISTS (
                        SELECT 1 FROM pg_roles r
                        WHERE (r.rolname = 'cohort_study_wide' OR (p_site IS NOT NULL AND r.rolname = 'cohort_site_' || p_site))
                          AND pg_has_role(session_user, r.oid, 'MEMBER'))
            $$;

        CREATE FUNCTION cohort_erase_records(p_participant_pk bigint) RETURNS bigint
            LANGUAGE plpgsql SECURITY DEFINER
            AS $$
            DECLARE
                p record;
                n bigint;
            BEGIN
                SELECT site, status INTO p FROM participants WHERE pk = p_participant_pk;
                IF NOT FOUND OR p.status <> 'erased' OR NOT cohort_session_acts_for(p.site) THEN
                    RAISE EXCEPTION 'cohort: records are deleted only by the erase of a participant of the caller''s site' USING ERRCODE = '42501';
                END IF;
                DELETE FROM records WHERE participant_pk = p_participant_pk;
                GET DIAGNOSTICS n = ROW_COUNT;
                RETURN n;
            END
            $$;

        CREATE FUNCTION cohort_erase_redactable(p_participant_id text) RETURNS bigint
            LANGUAGE plpgsql SECURITY DEFINER
            AS $$
            DECLARE
                p record;
                n bigint;
            BEGIN
                SELECT site, status INTO p FROM participants WHERE id::text = p_participant_id;
                IF NOT FOUND OR p.status <> 'erased' OR NOT cohort_session_acts_for(p.site) THEN
                    RAISE EXCEPTION 'cohort: redactable texts are deleted only by the erase of a participant of the caller''s site' USING ERRCODE = '42501';
                END IF;
                DELETE FROM redactable_texts WHERE participant_id = p_participant_id;
                GET DIAGNOSTICS n = ROW_COUNT;
                RETURN n;
            END
            $$;

        CREATE FUNCTION cohort_grant_site_privileges(p_role text) RETURNS void
            LANGUAGE plpgsql
            AS $$
            DECLARE
                schema_name text := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = 'participants'::regclass);
            BEGIN
                EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', schema_name, p_role);
                EXECUTE format('REVOKE ALL ON participants, consents, withdrawals, records, redactable_texts, import_batches, audit_events, '
                    'audit_checkpoints, protocol_revisions, templates, study, cohort_migrations FROM %I', p_role);
                EXECUTE format('GRANT SELECT ON participants, consents, withdrawals, records, redactable_texts, import_batches, audit_events, '
                    'audit_checkpoints, protocol_revisions, templates, study, cohort_migrations TO %I', p_role);
                EXECUTE format('GRANT INSERT ON participants, consents, withdrawals, records, redactable_texts, import_batches TO %I', p_role);
                EXECUTE format('GRANT UPDATE (status, withdrawn_at_ms, withdrawn_offset, code, name_enc, email_enc, phone_enc, birth_date_enc, '
                    'address_enc, zip_enc, mrn_enc, devices_enc, token_salt, token_hash) ON participants TO %I', p_role);
                EXECUTE format('GRANT UPDATE (status, signature_enc) ON consents TO %I', p_role);
                EXECUTE format('GRANT UPDATE (rows_total, rows_inserted, rows_duplicate, rows_rejected, actor) ON import_batches TO %I', p_role);
                EXECUTE format('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA %I TO %I', schema_name, p_role);
                EXECUTE format('GRANT EXECUTE ON FUNCTION cohort_lock_audit_chain(), cohort_append_event(text, text, text, text, jsonb), '
                    'cohort_append_checkpoint(bigint, text, text), cohort_erase_records(bigint), cohort_erase_redactable(text) TO %I', p_role);
            END
            $$;

        DECLARE
            f text;
            r text;
        BEGIN
            FOREACH f IN ARRAY ARRAY['cohort_json_string(text)', 'cohort_lock_audit_chain()', 'cohort_append_event(text, text, text, text, jsonb)',
                'cohort_append_checkpoint(bigint, text, text)', 'cohort_session_acts_for(text)', 'cohort_erase_records(bigint)',
                'cohort_erase_redactable(text)', 'cohort_grant_site_privileges(text)']
            LOOP
                EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, %I, pg_temp', f, current_schema());
                EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
            END LOOP;
            FOR r IN SELECT rolname FROM pg_roles WHERE starts_with(rolname, 'cohort_site_') OR rolname = 'cohort_study_wide' LOOP
                PERFORM cohort_grant_site_privileges(r);
            END LOOP;
        END;
        """
}
