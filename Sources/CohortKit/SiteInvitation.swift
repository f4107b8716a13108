import CohortCore
import CohortStore
import CohortCrypto
import CohortIO
import CohortStorePostgres
public import Foundation

/// `cohort site invite` and `cohort site join`: how a site coordinator gets a workspace.
///
/// The owner's workspace makes an invitation folder for one site: a keystore with the site's own,
/// new Ed25519 signing key (registered in the audit trail for that site by the owner's key, see
/// ``SigningKeyRegistry``), the connection settings (`store.json`, naming the coordinator's login
/// role when given), the owner's signed `audit.head`, and `site.json` naming the site. The folder
/// holds no key of the owner's (no owner `signing.pem`) and no other site's key. What the study's
/// identifier key and secret are in it is said in docs/multi-site.md. On the coordinator's machine
/// `cohort site join` installs the folder as a workspace (0700, files 0600), refusing one that
/// group or others could read on the way, and checks that it connects as a member of that site's
/// role, not as the owner, and that its key is the one registered for the site.
public enum SiteInvitation {
    /// The file naming the site an invitation folder is for.
    public static let fileName = "site.json"

    /// `site.json`.
    struct Marker: Codable {
        var format = "cohort/site-invitation@1"
        /// The site; nil for a study-wide (monitor's) invitation.
        var site: String?
        var keyFingerprint: String

        var scope: SigningKeyRegistry.Scope { site.map { .site($0) } ?? .studyWide }

        enum CodingKeys: String, CodingKey {
            case format, site
            case keyFingerprint = "key_fingerprint"
        }
    }

    /// What an invitation made.
    public struct Invited: Sendable {
        /// The folder written.
        public var folder: URL
        /// The site it is for; nil for a study-wide (monitor's) invitation.
        public var site: String?
        /// The site's new signing key's fingerprint.
        public var keyFingerprint: String
        /// The `site.key_registered` event.
        public var registrationSeq: Int64
        /// A rotation's `site.key_revoked` events: (fingerprint of the earlier key, event seq).
        public var revoked: [(fingerprint: String, seq: Int64)] = []
    }

    /// Makes the invitation folder `folder` (which must not exist) for `site` — nil: a study-wide
    /// role's (a monitor's), whose key may sign for every site — from the owner's workspace
    /// `owner`; `role` is the coordinator's login role for `store.json`'s URL (else the URL is the
    /// owner's, and the coordinator sets `COHORT_DATABASE_URL`).
    ///
    /// - Throws: `.invalidInput` for a bad site name or a SQLite workspace; `.conflict` when the
    ///   folder exists; `.security` from a workspace that is not the owner's (a site's
    ///   coordinator cannot invite anyone, for any site).
    public static func invite(from owner: Workspace, site name: String?, role: String?, to folder: URL, rotating: Bool = false) throws -> Invited {
        let site = try SiteName.parse(name, field: "site")
        if rotating, site == nil { throw CohortError.invalid("a rotation is for one site's key", field: "site", hint: "give --site NAME") }
        if let site { _ = try PostgresSiteRoles.groupRole(site: site) }
        let scope: SigningKeyRegistry.Scope = site.map { .site($0) } ?? .studyWide
        let scopeText = site.map { "--site \($0)" } ?? "--study-wide"
        guard let configuration = try StoreConfiguration.load(from: owner.directory) else {
            throw CohortError.invalid(
                "site workspaces share one PostgreSQL database; this workspace's study is in its own study.db", field: "workspace",
                hint: "a multi-site study starts with `cohort init --database postgresql://OWNER@HOST/DB` (docs/multi-site.md)")
        }
        let registry = try owner.signingKeys()
        guard registry.owner?.fingerprint == owner.keystore.publicKey.fingerprint else {
            throw CohortError(
                .security, "only the study owner's workspace invites a site's coordinator (this workspace signs as \(registry.entry(fingerprint: owner.keystore.publicKey.fingerprint)?.scope.description ?? "an unregistered key"))",
                at: .init(field: "workspace"), hint: "ask the study owner to run `cohort site invite \(scopeText) --out DIR`")
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) {
            throw CohortError(.conflict, "the invitation folder already exists", at: .init(file: folder.path), hint: "give a new --out folder")
        }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        } catch {
            throw CohortError(.system, "cannot create the invitation folder", at: .init(file: folder.path), hint: "check that its parent folder exists and is writable")
        }
        do {
            let siteKey = try Ed25519PrivateKey.generate()
            // A site's pii.key is a new key-encryption key of the site (it opens that site's data
            // key only); a study-wide (monitor's) workspace holds the study's pii.key.
            let piiKey = site == nil ? owner.keystore.piiKey : try SecureRandom.bytes(Keystore.secretByteCount)
            let keystore = try Keystore(studySecret: owner.keystore.studySecret, piiKey: piiKey, signingKey: siteKey)
            try keystore.write(to: Workspace.keysDirectory(of: folder))
            if let site { try wrapDataKey(owner, site: site, keystore: keystore, rotating: rotating) }
            var url = configuration.url
            if let role { url = try Self.url(url, role: role) }
            try StoreConfiguration(postgresqlURL: url).write(to: folder)
            try write(Marker(site: site, keyFingerprint: siteKey.publicKey.fingerprint), to: folder.appendingPathComponent(fileName))
            let event = try owner.registerSigningKey(siteKey.publicKey, scope: scope)
            var revoked: [(fingerprint: String, seq: Int64)] = []
            if rotating, let site {
                // A coordinator left: every earlier signing key of the site stops counting from here.
                let earlier = try owner.signingKeysToRevoke(site: site, fingerprint: nil, keeping: siteKey.publicKey.fingerprint)
                let events = try owner.revokeSigningKeys(earlier, reason: "rotate-key")
                revoked = zip(earlier, events).map { ($0.fingerprint, $1.seq) }
            }
            // The owner's signed head after the registration: the coordinator's workspace starts from it.
            try SecureFile.write(try SecureFile.readPrivate(owner.auditHeadURL.path), to: folder.appendingPathComponent(Workspace.auditHeadFileName).path, replacing: false)
            try SecureFile.syncDirectory(folder.path)
            return Invited(folder: folder, site: site, keyFingerprint: siteKey.publicKey.fingerprint, registrationSeq: event.seq, revoked: revoked)
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
    }

    /// The owner event that records a site's key-encryption key (its `pii.key` fingerprint);
    /// `site.key…`, so only the tables' owner can append it (migration `v7-owner-actions`).
    public static let kekAction = "site.key_kek"

    /// Wraps `site`'s data key under the invitation's `pii.key` (its key-encryption key), making
    /// the data key when the site has none, and records the KEK's fingerprint (`site.key_kek`).
    static func wrapDataKey(_ owner: Workspace, site: String, keystore: Keystore, rotating: Bool) throws {
        guard let store = owner.store as? PostgresStudyStore else {
            throw CohortError.invalid("per-site identifier keys need a PostgreSQL study", field: "workspace")
        }
        let fingerprint = keystore.fingerprints.piiKey
        let made = try store.wrapSiteDataKey(site: site, kek: keystore.piiKey, kekFingerprint: fingerprint, replacing: rotating)
        try owner.store.appendEvent(
            actor: owner.actor, action: kekAction,
            details: ["site": site, "pii_key": fingerprint, "rotated": rotating ? "true" : "false", "data_key_created": made ? "true" : "false"],
            at: owner.now())
    }

    /// What joining installed.
    public struct Joined: Sendable {
        /// The installed workspace.
        public var workspace: URL
        /// Its site; nil for a study-wide workspace.
        public var site: String?
        /// The database role it connects as.
        public var role: String
        /// Its signing key's fingerprint.
        public var keyFingerprint: String
    }

    /// Installs the invitation folder `source` as the workspace `destination` (which must not
    /// exist): folder and `keys/` 0700, every file 0600. Refuses a source folder or file that
    /// group or others may access (it was exposed: ask the owner for a new invitation), then opens
    /// the workspace and checks that its role is a member of the site's role and not the owner,
    /// and that its key is registered for the site. On any failure nothing stays at `destination`.
    public static func join(
        _ source: URL, into destination: URL, actor: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> Joined {
        let keys = Workspace.keysDirectory(of: source)
        let files = [
            source.appendingPathComponent(fileName), source.appendingPathComponent(StoreConfiguration.fileName),
            source.appendingPathComponent(Workspace.auditHeadFileName),
        ] + Keystore.fileNames.map { keys.appendingPathComponent($0) }
        try checkPrivate(folders: [source, keys], files: files)
        let marker: Marker
        do {
            marker = try JSONDecoder().decode(Marker.self, from: Data(try SecureFile.readPrivate(files[0].path)))
        } catch {
            throw CohortError(.invalidInput, "site.json is not a cohort site invitation", at: .init(file: files[0].path), hint: "use the folder `cohort site invite` made")
        }
        if FileManager.default.fileExists(atPath: destination.path) {
            throw CohortError(.conflict, "the workspace folder already exists", at: .init(file: destination.path), hint: "give -w a new folder for the site's workspace")
        }
        do {
            try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            _ = chmod(destination.path, 0o700)
            let keystore = try Keystore.load(from: keys)
            try keystore.write(to: Workspace.keysDirectory(of: destination))
            for name in [fileName, StoreConfiguration.fileName, Workspace.auditHeadFileName] {
                try SecureFile.write(try SecureFile.readPrivate(source.appendingPathComponent(name).path), to: destination.appendingPathComponent(name).path, replacing: false)
            }
            try SecureFile.syncDirectory(destination.path)
            guard let configuration = try StoreConfiguration.load(from: destination) else {
                throw CohortError(.invalidInput, "the invitation names no database", at: .init(file: destination.path))
            }
            let membership = try PostgresSiteRoles.membership(url: configuration.connectionURL(environment: environment), site: marker.site)
            let scopeText = marker.site.map { "site \($0)" } ?? "every site (study-wide)"
            guard !membership.isOwner else {
                throw CohortError(
                    .security, "this workspace connects as \(membership.role), the study owner's role (or a superuser); a site's workspace connects as its coordinator's login role",
                    at: .init(field: StoreConfiguration.environmentKey), hint: "set COHORT_DATABASE_URL=postgresql://YOUR_LOGIN@HOST/DB, or ask the owner to invite with --role YOUR_LOGIN")
            }
            guard membership.isSiteMember else {
                throw CohortError(
                    .security, "the database role \(membership.role) is not a coordinator of \(scopeText)", at: .init(field: StoreConfiguration.environmentKey),
                    hint: "the owner runs `cohort site grant \(marker.site ?? "--study-wide") --role \(membership.role)`; then join again")
            }
            // The role first (a role of no site cannot read the tables to open the workspace), then the keys and audit.head.
            let workspace = try Workspace.open(at: destination, actor: actor, environment: environment)
            guard try workspace.signingScope() == marker.scope, keystore.publicKey.fingerprint == marker.keyFingerprint else {
                throw CohortError(
                    .security, "the invitation's signing key is not the one the audit trail registers for \(scopeText)",
                    at: .init(file: keys.appendingPathComponent(Keystore.signingKeyFileName).path), hint: "ask the study owner for a new invitation")
            }
            return Joined(workspace: destination, site: marker.site, role: membership.role, keyFingerprint: marker.keyFingerprint)
        } catch {
            try? FileManager.default.removeItem(at: destination)
            throw error
        }
    }

    /// Every folder and file of the invitation is there, plain (no link), and private to its
    /// owner: a copy others may read exposed its keys.
    private static func checkPrivate(folders: [URL], files: [URL]) throws {
        for (url, isFolder) in folders.map({ ($0, true) }) + files.map({ ($0, false) }) {
            var info = stat()
            guard lstat(url.path, &info) == 0 else {
                throw CohortError(.notFound, "the invitation folder is incomplete (\(url.lastPathComponent) is missing)", at: .init(file: url.path),
                    hint: "copy the whole folder `cohort site invite` made (e.g. scp -rp), or ask the owner for a new invitation")
            }
            let kind = info.st_mode & S_IFMT
            guard kind == (isFolder ? S_IFDIR : S_IFREG) else {
                throw CohortError(.security, "\(url.lastPathComponent) in the invitation is not a plain \(isFolder ? "folder" : "file") (a link?)", at: .init(file: url.path),
                    hint: "copy the folder itself, not links to it")
            }
            guard info.st_mode & 0o077 == 0 else {
                throw CohortError(
                    .security, "the invitation's \(url.lastPathComponent) is accessible to group or others (mode \(String(info.st_mode & 0o777, radix: 8))): its keys may have been read",
                    at: .init(file: url.path),
                    hint: "ask the study owner for a new invitation (`cohort site invite`), and copy it keeping its modes (scp -rp, or tar); do not chmod this one and use it")
            }
        }
    }

    /// `url` connecting as `role` (any user and password in it dropped).
    static func url(_ url: String, role: String) throws -> String {
        guard !role.isEmpty, role.utf8.count <= 63, role.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "." }),
            let scheme = url.range(of: "://")
        else {
            throw CohortError.invalid(
                "expected a login role of letters, digits, '_', '-' or '.' and a postgresql://… URL", field: "role",
                hint: "or leave --role out and have the coordinator set COHORT_DATABASE_URL")
        }
        let rest = url[scheme.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let host = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
        return String(url[..<scheme.upperBound]) + role + "@" + host + rest[authorityEnd...]
    }

    private static func write(_ marker: Marker, to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try SecureFile.write(Array(try encoder.encode(marker)) + [0x0A], to: url.path, replacing: false)
    }
}
