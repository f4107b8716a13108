import CohortCore
import CohortStorePostgres
public import Foundation

/// Where a workspace's study database is when it is not the workspace's own `study.db`: the
/// small `store.json` file (mode 0600) that `cohort init --database <url>` writes next to `keys/`.
///
/// It names the store kind and the database URL **without its password**: libpq takes the
/// password from `PGPASSWORD` or `~/.pgpass` (or a client certificate), so no secret sits in the
/// workspace folder. A second coordinator joins the study by copying the workspace folder (keys/,
/// store.json and audit.head); `COHORT_DATABASE_URL` at open overrides the URL (CI, or a URL that
/// a secrets manager hands over), while the keys still come from the workspace.
public struct StoreConfiguration: Codable, Sendable, Equatable {
    /// The store kinds a configuration can name.
    public enum Kind: String, Codable, Sendable {
        /// A PostgreSQL database, by libpq URL.
        case postgresql
    }

    /// The file's name inside the workspace.
    public static let fileName = "store.json"
    /// The environment variable whose URL overrides the configuration's (and gives `cohort init`
    /// a database when `--database` is not given).
    public static let environmentKey = "COHORT_DATABASE_URL"
    static let formatName = "cohort/store@1"

    /// `cohort/store@1`.
    public var format: String
    /// The store kind.
    public var kind: Kind
    /// The database URL, without password.
    public var url: String

    /// A PostgreSQL configuration for `url`; any password in it is dropped.
    public init(postgresqlURL url: String) {
        self.format = Self.formatName
        self.kind = .postgresql
        self.url = PostgresStudyStore.redacted(url)
    }

    /// True when `url` names a PostgreSQL database (`postgresql://…`, `postgres://…`, or a
    /// libpq keyword string such as `host=… dbname=…`).
    public static func isPostgreSQLURL(_ url: String) -> Bool {
        url.hasPrefix("postgresql://") || url.hasPrefix("postgres://") || url.contains("dbname=")
    }

    /// The configuration file of the workspace at `directory`.
    public static func fileURL(in directory: URL) -> URL { directory.appendingPathComponent(fileName) }

    /// The configuration in `directory`, or nil when the workspace has none (a SQLite workspace).
    public static func load(from directory: URL) throws -> StoreConfiguration? {
        let url = fileURL(in: directory)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw CohortError(.system, "cannot read the workspace's store configuration", at: .init(file: url.path), hint: "check its permissions")
        }
        guard data.count < 64 * 1024, let configuration = try? JSONDecoder().decode(StoreConfiguration.self, from: data),
            configuration.format == formatName
        else {
            throw CohortError(.invalidInput, "the workspace's store configuration is not a cohort store file", at: .init(file: url.path, field: "format"),
                hint: "expected {\"format\": \"\(formatName)\", \"kind\": \"postgresql\", \"url\": \"postgresql://user@host/db\"}; copy it again from the first coordinator's workspace")
        }
        return configuration
    }

    /// Writes the configuration into `directory` (mode 0600).
    package func writeForTesting(to directory: URL) throws { try write(to: directory) }

    /// The URL to connect with (see ``connectionURL(environment:)``).
    package func connectionURLForTesting(environment: [String: String]) -> String { connectionURL(environment: environment) }

    /// Writes the configuration into `directory` (mode 0600).
    func write(to directory: URL) throws {
        let url = Self.fileURL(in: directory)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(self) + Data("\n".utf8)
        guard FileManager.default.createFile(atPath: url.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw CohortError(.system, "cannot write the workspace's store configuration", at: .init(file: url.path), hint: "check the folder's permissions")
        }
    }

    /// The URL to connect with: `COHORT_DATABASE_URL` from `environment` when set, else the
    /// configuration's.
    func connectionURL(environment: [String: String]) -> String {
        if let override = environment[Self.environmentKey], !override.isEmpty { return override }
        return url
    }
}
