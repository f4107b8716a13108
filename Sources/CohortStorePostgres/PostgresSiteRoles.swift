import CohortCore
import Foundation
import CohortPostgres

/// The PostgreSQL roles of a multi-site study (`cohort site add`, `cohort site grant`).
///
/// Each site has a group role `cohort_site_<site>` (NOLOGIN) holding the table privileges the
/// store needs; row-level security (migration `v3-site-security`) limits its members to that
/// site's participants and their consents, withdrawals, records and redactable texts. The group
/// role `cohort_study_wide` holds the same privileges and sees every site. A coordinator's login
/// role is made a member of one or more of these groups. Roles are cluster-wide in PostgreSQL;
/// the privileges are granted in the study's database only.
///
/// Administration runs as the owner of the study's tables (the workspace that ran `cohort init
/// --database`); creating roles needs CREATEROLE (or a superuser, who can run the SQL that
/// `--dry-run` prints).
public struct PostgresSiteRoles: Sendable {
    /// The group role that sees every site.
    public static let studyWideRole = "cohort_study_wide"
    /// The longest site name that fits a role name (PostgreSQL names have at most 63 bytes).
    public static let maximumSiteLength = 63 - "cohort_site_".utf8.count

    /// The migration whose privilege function (`cohort_grant_site_privileges`) the grants use.
    static let privilegesMigration = "v6-server-audit"

    /// The group role of `site` (`cohort_site_site-a`). Throws `.invalidInput` for a name that is
    /// not a ``SiteName`` or is too long for a role name.
    public static func groupRole(site: String) throws -> String {
        guard SiteName.isValid(site) else {
            throw CohortError.invalid("expected a site name of 1–\(SiteName.maximumLength) lowercase letters, digits, '-' or '_'", field: "site")
        }
        guard site.utf8.count <= maximumSiteLength else {
            throw CohortError.invalid(
                "a site name for PostgreSQL roles has at most \(maximumSiteLength) characters (cohort_site_<site> must fit 63 bytes)", field: "site",
                hint: "use a shorter site name")
        }
        return "cohort_site_" + site
    }

    /// `name` as a quoted SQL identifier; throws for an empty name, one longer than 63 bytes or one with a NUL.
    static func quoted(_ name: String, field: String) throws -> String {
        guard !name.isEmpty, name.utf8.count <= 63, !name.utf8.contains(0) else {
            throw CohortError.invalid("expected a PostgreSQL role name of 1–63 bytes", field: field)
        }
        return "\"" + ASCIIEscaping.replacing(0x22, with: "\"\"", in: name) + "\""
    }

    /// `text` as one POSIX shell word (single-quoted), for a hint that shows a command to run.
    static func shellQuoted(_ text: String) -> String {
        "'" + ASCIIEscaping.replacing(0x27, with: "'\\''", in: text) + "'"
    }

    /// `text` as an SQL string literal.
    static func literal(_ text: String) -> String { "'" + ASCIIEscaping.replacing(0x27, with: "''", in: text) + "'" }

    /// The statements that create group role `role` (unless it exists) and grant it what the
    /// store needs — and nothing more — through the schema's `cohort_grant_site_privileges`
    /// (migration `v6-server-audit`; one list of privileges for the migration and for these):
    /// SELECT on every table; INSERT on the participant tables and `import_batches`; UPDATE on
    /// only the columns a withdrawal or an import's counts change; no write on the audit tables,
    /// the protocol, its templates or the study; EXECUTE on the functions that append to the
    /// audit trail and delete an erased participant's rows.
    static func groupStatements(role: String) throws -> [String] {
        let q = try quoted(role, field: "site")
        return [
            "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = \(literal(role))) THEN CREATE ROLE \(q) NOLOGIN; END IF; END $$",
            "SELECT cohort_grant_site_privileges(\(literal(role)))",
        ]
    }

    /// The SQL of `cohort site add SITE`: the site's group role with its privileges. Running it
    /// again re-grants (after an upgrade added tables) and changes nothing else.
    public static func addSiteStatements(site: String) throws -> [String] {
        try groupStatements(role: groupRole(site: site))
    }

    /// The SQL of `cohort site grant`: `login` joins the group of `site`, or `cohort_study_wide`
    /// when `site` is nil (the study-wide group is created with its privileges when missing).
    public static func grantStatements(site: String?, login: String) throws -> [String] {
        let group = try site.map(groupRole(site:)) ?? studyWideRole
        let setup = site == nil ? try groupStatements(role: studyWideRole) : []
        return setup + ["GRANT \(try quoted(group, field: "site")) TO \(try quoted(login, field: "role"))"]
    }

    /// Runs `statements` in one transaction on the study database at `url`, after checking that
    /// the connection is the owner of the study's tables, that the schema has row-level security
    /// (`v3-site-security`), and that every role in `requiredRoles` exists. Nothing is changed
    /// when any check or statement fails. Errors name the check or the SQLSTATE, never a row value.
    public static func apply(_ statements: [String], url: String, requiredRoles: [String] = []) throws {
        let location = PostgresStudyStore.redacted(url)
        let conn = try PostgresConnection(url: url)
        try conn.query("SET client_min_messages = warning")
        let owner = try conn.query(
            "SELECT pg_get_userbyid(relowner) = current_user FROM pg_class WHERE oid = to_regclass('participants')").first?.first ?? nil
        guard let owner else {
            throw CohortError(.notFound, "this PostgreSQL database is not a cohort study database (it has no participants table)",
                at: .init(file: location), hint: "give the URL of the study's database (the one `cohort init --database` used)")
        }
        guard owner == "t" else {
            throw CohortError(.security, "site roles are administered by the owner of the study's tables, and this connection's role is not the owner",
                at: .init(file: location), hint: "connect with the role that ran `cohort init --database`, or have a superuser run the SQL from --dry-run")
        }
        let migrated = try conn.query("SELECT 1 FROM cohort_migrations WHERE name = $1", [privilegesMigration])
        guard !migrated.isEmpty else {
            throw CohortError(
                .conflict, "the study database has not been upgraded to server-written audit trails and site privileges yet (migration \(privilegesMigration))",
                at: .init(file: location),
                hint: "run any cohort command on the workspace once with this version to upgrade the database")
        }
        for role in requiredRoles {
            guard !(try conn.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [role])).isEmpty else {
                throw CohortError(.notFound, "the PostgreSQL role \(role) does not exist", at: .init(file: location, field: "role"),
                    hint: "create the coordinator's login role first (createuser \(shellQuoted(role)), or CREATE ROLE … LOGIN)")
            }
        }
        try conn.transaction {
            for statement in statements { try conn.query(statement) }
        }
    }
}

extension PostgresSiteRoles {
    /// What the login role of `url` is to the study whose database `url` names.
    public struct Membership: Sendable {
        /// The login role (`session_user`).
        public var role: String
        /// A member of the site's group role (directly or through others).
        public var isSiteMember: Bool
        /// A member of the role that owns the study's tables (the owner, or a superuser).
        public var isOwner: Bool
    }

    /// Connects as `url`'s role and asks the server what it is to `site` (`cohort site join`
    /// checks that a coordinator's workspace connects as a coordinator of its site, not as the
    /// owner); `site` nil asks about the study-wide role. Throws `.notFound` when the group role
    /// does not exist.
    public static func membership(url: String, site: String?) throws -> Membership {
        let group = try site.map(groupRole(site:)) ?? studyWideRole
        let conn = try PostgresConnection(url: url)
        guard try conn.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [group]).first != nil else {
            throw CohortError(.notFound, "the site's group role \(group) does not exist in this cluster", at: .init(field: "site"),
                hint: site.map { "the owner runs `cohort site add \($0)`" } ?? "the owner runs `cohort site grant --study-wide --role LOGIN`")
        }
        let row = try conn.query(
            """
            SELECT session_user::text, pg_has_role(session_user, $1, 'MEMBER')::text,
                   pg_has_role(session_user, (SELECT c.relowner FROM pg_class c WHERE c.oid = to_regclass('audit_events')), 'MEMBER')::text
            """, [group]).first
        return Membership(role: (row?[0] ?? nil) ?? "", isSiteMember: (row?[1] ?? nil) == "true", isOwner: (row?[2] ?? nil) == "true")
    }
}
