extension PostgresSchema {
    /// Migration `v7-owner-actions`: the events that say which keys belong to the study are the
    /// owner's (issue #30, per-site signing keys).
    ///
    /// `keys.create` and `keys.check` name the owner's key fingerprints, `site.key_registered`
    /// (and any later `site.key…` action) registers a site's signing key: a trigger on
    /// `audit_events` refuses them (SQLSTATE 42501) unless the login role (`session_user`, not the
    /// function's definer) is a member of the role that owns the table. The trigger runs for the
    /// rows `cohort_append_event` inserts too, so no site role can record them by any route. cohort
    /// also checks every registration by the owner's Ed25519 signature, so this is a second wall.
    static let v7OwnerActions = """
        CREATE FUNCTION cohort_owner_only_actions() RETURNS trigger
            LANGUAGE plpgsql
            AS $$
            BEGIN
                IF (NEW.action LIKE 'keys.%' OR NEW.action LIKE 'site.key%')
                    AND NOT pg_has_role(session_user, (SELECT c.relowner FROM pg_class c WHERE c.oid = TG_RELID), 'MEMBER') THEN
                    RAISE EXCEPTION 'cohort: only the study owner records the study''s keys (%)', NEW.action USING ERRCODE = '42501';
                END IF;
                RETURN NEW;
            END
            $$;
        CREATE TRIGGER audit_events_owner_actions BEFORE INSERT ON audit_events
            FOR EACH ROW EXECUTE FUNCTION cohort_owner_only_actions();
        """
}
