extension PostgresSchema {
    /// Migration `v8-site-data-keys`: per-site identifier keys (issue #30, envelope encryption).
    ///
    /// One row per site and holder: the site's data key wrapped (AES-256-GCM, see `PIIKeyRing`)
    /// under the owner's study-wide `pii.key` (`holder = 'study'`) or under a key-encryption key
    /// of the site, the `pii.key` of a site coordinator's workspace (`holder = 'site:<its
    /// fingerprint>'`, one per invitation; a rotation deletes them all and adds one). Only the
    /// owner of the tables writes rows (no privilege is granted for it); a role reads its own
    /// sites' `site` rows and, if study-wide, the `study` rows — row security, so a site role
    /// does not even see another site's wrapped key. Wrapped keys are useless without the
    /// wrapping key in any case.
    static let v8SiteDataKeys = """
        CREATE TABLE site_data_keys (
            site text NOT NULL,
            holder text NOT NULL CHECK (holder = 'study' OR starts_with(holder, 'site:')),
            wrapped bytea NOT NULL,
            PRIMARY KEY (site, holder)
        );
        ALTER TABLE site_data_keys ENABLE ROW LEVEL SECURITY;
        CREATE POLICY site_data_keys_by_holder ON site_data_keys FOR SELECT
            USING ((starts_with(holder, 'site:') AND site IN (SELECT cohort_member_sites()))
                OR (holder = 'study' AND (SELECT cohort_is_study_wide())));
        REVOKE ALL ON site_data_keys FROM PUBLIC;
        GRANT SELECT ON site_data_keys TO PUBLIC;
        """
}
