import CohortCore
import CohortStorePostgres

/// What `cohort site add` or `cohort site grant` did (or, with `dryRun`, would do).
public struct SiteChange: Sendable {
    /// One sentence for the operator: the roles created or granted (role and site names only).
    public var summary: String
    /// The SQL run (or to run), in order, in one transaction.
    public var statements: [String]
    /// False for a dry run: nothing was sent to the server.
    public var applied: Bool
}

/// Site roles on a PostgreSQL study database: a group role per site, the study-wide group, and
/// coordinators' login roles made members of them (see `PostgresSiteRoles`). Row-level security
/// (schema migration `v3-site-security`) then shows each coordinator only their sites'
/// participants and records.
public struct SiteAdministration: Sendable {
    /// The study database's URL, connecting as the owner of its tables (the workspace's own URL);
    /// nil allows dry runs only.
    public let databaseURL: String?

    /// Administration of the study database at `databaseURL` (nil: dry runs only).
    public init(databaseURL: String?) { self.databaseURL = databaseURL }

    /// Creates group role `cohort_site_<site>` (unless it exists) and grants it the table
    /// privileges the store needs; idempotent. With `dryRun`, only returns the SQL. Throws
    /// `.invalidInput` for a bad site name, and the checks of `PostgresSiteRoles.apply`.
    public func addSite(_ site: String, dryRun: Bool) throws -> SiteChange {
        let statements = try PostgresSiteRoles.addSiteStatements(site: site)
        let role = try PostgresSiteRoles.groupRole(site: site)
        if !dryRun { try PostgresSiteRoles.apply(statements, url: try url()) }
        return SiteChange(
            summary: "group role \(role) has the table privileges of a coordinator of site \(site); grant it with `cohort site grant \(site) --role LOGIN`",
            statements: statements, applied: !dryRun)
    }

    /// Makes login role `role` a member of site `site`'s group, or of `cohort_study_wide` when
    /// `site` is nil (created with its privileges when missing). The site's group must exist
    /// (`addSite`), and so must the login role. With `dryRun`, only returns the SQL.
    public func grant(site: String?, role: String, dryRun: Bool) throws -> SiteChange {
        let statements = try PostgresSiteRoles.grantStatements(site: site, login: role)
        let group = try site.map(PostgresSiteRoles.groupRole(site:)) ?? PostgresSiteRoles.studyWideRole
        if !dryRun { try PostgresSiteRoles.apply(statements, url: try url(), requiredRoles: site == nil ? [role] : [group, role]) }
        let scope = site.map { "the participants of site \($0)" } ?? "the participants of every site"
        return SiteChange(summary: "role \(role) is a member of \(group): it sees and changes \(scope)", statements: statements, applied: !dryRun)
    }

    private func url() throws -> String {
        guard let databaseURL, !databaseURL.isEmpty else {
            throw CohortError.invalid(
                "no study database to administer", field: "database",
                hint: "give --database postgresql://OWNER@HOST/DB (the workspace's database URL), set COHORT_DATABASE_URL, or use --dry-run")
        }
        return databaseURL
    }
}
