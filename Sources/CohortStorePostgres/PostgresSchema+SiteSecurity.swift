extension PostgresSchema {
    /// Migration `v3-site-security`: row-level security by site.
    ///
    /// A participant row is visible (and can be changed) only by a role that is a member of
    /// `cohort_site_<site>` or of `cohort_study_wide`; consents, withdrawals and records are
    /// visible when their participant is, and redactable texts when the participant they concern
    /// is (texts about no participant stay visible). `WITH CHECK` refuses a row a role could not
    /// see afterwards: a site coordinator can neither enroll into nor move a participant to
    /// another site, nor add a record, consent or withdrawal for another site's participant.
    ///
    /// The table owner (the workspace that ran `cohort init --database`) is not subject to the
    /// policies (RLS is enabled, not forced): it administers the study and the roles
    /// (`cohort site add/grant`). Audit events, checkpoints, protocol revisions, templates and
    /// import batches have no policy: every coordinator must be able to verify the whole audit
    /// chain, and those rows carry no identifiers by design. The roles need not exist when the
    /// migration runs: a role that does not exist gives no one access.
    ///
    /// The role checks are uncorrelated subqueries, so PostgreSQL evaluates them once per query
    /// (an InitPlan and a hashed SubPlan) rather than once per row (measured in docs/multi-site.md).
    static let v3SiteSecurity = """
        CREATE FUNCTION cohort_is_study_wide() RETURNS boolean
            LANGUAGE sql STABLE
            SET search_path = pg_catalog, pg_temp
            AS $$
                SELECT EXISTS (
                    SELECT 1 FROM pg_catalog.pg_roles r
                    WHERE r.rolname = 'cohort_study_wide' AND pg_catalog.pg_has_role(current_user, r.oid, 'MEMBER'))
            $$;
        COMMENT ON FUNCTION cohort_is_study_wide() IS
            'cohort: true when the current role is a member of cohort_study_wide (sees every site)';
        CREATE FUNCTION cohort_member_sites() RETURNS SETOF text
            LANGUAGE sql STABLE
            SET search_path = pg_catalog, pg_temp
            AS $$
                SELECT substr(r.rolname, 13) FROM pg_catalog.pg_roles r
                WHERE starts_with(r.rolname, 'cohort_site_') AND pg_catalog.pg_has_role(current_user, r.oid, 'MEMBER')
            $$;
        COMMENT ON FUNCTION cohort_member_sites() IS
            'cohort: the sites whose group role cohort_site_<site> the current role is a member of';

        ALTER TABLE participants ENABLE ROW LEVEL SECURITY;
        CREATE POLICY participants_by_site ON participants
            USING ((SELECT cohort_is_study_wide()) OR site IN (SELECT cohort_member_sites()))
            WITH CHECK ((SELECT cohort_is_study_wide()) OR site IN (SELECT cohort_member_sites()));

        ALTER TABLE consents ENABLE ROW LEVEL SECURITY;
        CREATE POLICY consents_by_site ON consents
            USING (participant_pk IN (SELECT pk FROM participants))
            WITH CHECK (participant_pk IN (SELECT pk FROM participants));

        ALTER TABLE withdrawals ENABLE ROW LEVEL SECURITY;
        CREATE POLICY withdrawals_by_site ON withdrawals
            USING (participant_pk IN (SELECT pk FROM participants))
            WITH CHECK (participant_pk IN (SELECT pk FROM participants));

        ALTER TABLE records ENABLE ROW LEVEL SECURITY;
        CREATE POLICY records_by_site ON records
            USING (participant_pk IN (SELECT pk FROM participants))
            WITH CHECK (participant_pk IN (SELECT pk FROM participants));

        ALTER TABLE redactable_texts ENABLE ROW LEVEL SECURITY;
        CREATE POLICY redactable_texts_by_site ON redactable_texts
            USING (participant_id IS NULL OR participant_id IN (SELECT id::text FROM participants))
            WITH CHECK (participant_id IS NULL OR participant_id IN (SELECT id::text FROM participants));
        """
}
