public import CohortCore
public import CohortCrypto
public import CohortStore
public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A study workspace: a directory holding `study.db` and the keystore (`keys/`). One workspace
/// holds one study. Everything the CLI does goes through here, so tests can do it too.
public final class Workspace: Sendable {
    /// The workspace folder.
    public let directory: URL
    /// The study database (`study.db`).
    public let store: StudyStore
    /// The workspace's keys (`keys/`).
    public let keystore: Keystore
    /// Who is acting (`--actor`, or the OS user); recorded in audit events.
    public let actor: String
    /// The clock; injected so tests are deterministic.
    public let now: @Sendable () -> Date

    /// The keystore folder's name inside the workspace.
    public static let keysDirectoryName = "keys"
    /// The signed head of the audit chain, kept outside the database next to `study.db`.
    public static let auditHeadFileName = "audit.head"

    /// The `audit.head` file of this workspace.
    public var auditHeadURL: URL { directory.appendingPathComponent(Self.auditHeadFileName) }

    /// The actor recorded in the audit trail: `explicit` (`--actor`) when given, else the OS
    /// account of the effective user (`getpwuid(geteuid())` — not `$USER`, which anyone can set).
    public static func actorName(explicit: String?) -> String {
        if let explicit, !explicit.trimmingCharacters(in: .whitespaces).isEmpty { return explicit }
        let uid = geteuid()
        if let entry = getpwuid(uid), let name = entry.pointee.pw_name {
            let text = String(cString: name)
            if !text.isEmpty { return text }
        }
        return "uid-\(uid)"
    }

    init(directory: URL, store: StudyStore, keystore: Keystore, actor: String, now: @escaping @Sendable () -> Date) {
        self.directory = directory
        self.store = store
        self.keystore = keystore
        self.actor = actor
        self.now = now
    }

    /// The keystore directory of a workspace.
    public static func keysDirectory(of directory: URL) -> URL { directory.appendingPathComponent(keysDirectoryName, isDirectory: true) }

    /// Creates a workspace: the directory (0700), the keystore and `study.db`, and loads
    /// `protocolURL` when given. Refuses a directory that already holds a workspace.
    public static func create(
        at directory: URL, protocolURL: URL? = nil, actor: String, now: @escaping @Sendable () -> Date = { Date() }
    ) throws -> Workspace {
        let fm = FileManager.default
        let dbURL = directory.appendingPathComponent(StudyStore.fileName)
        if fm.fileExists(atPath: dbURL.path) {
            throw CohortError(.conflict, "a workspace already exists here", at: .init(file: directory.path),
                hint: "use it (`--workspace \(directory.path)`), or choose another --dir")
        }
        // Validate the protocol before creating anything, so a bad file leaves nothing behind.
        let loaded = try protocolURL.map { try ProtocolLoader.load(contentsOf: $0) }
        do {
            try fm.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw CohortError(.system, "cannot create the workspace folder", at: .init(file: directory.path), hint: "check the path and permissions")
        }
        let keysDir = keysDirectory(of: directory)
        let keystore: Keystore
        if fm.fileExists(atPath: keysDir.appendingPathComponent(Keystore.signingKeyFileName).path) {
            keystore = try Keystore.load(from: keysDir)
        } else {
            keystore = try Keystore.create(at: keysDir)
        }
        let store = try StudyStore(url: dbURL, piiKey: keystore.piiKey, create: true)
        let workspace = Workspace(directory: directory, store: store, keystore: keystore, actor: actor, now: now)
        let fp = keystore.fingerprints
        // `audit_head` records in the chain that this workspace keeps audit.head, so a deleted
        // file is noticed.
        try store.appendEvent(
            actor: actor, action: "workspace.init", details: ["schema": StudyStore.schemaVersion, "audit_head": auditHeadFileName], at: now())
        try store.appendEvent(
            actor: actor, action: "keys.create", details: ["signing": fp.signing, "study_secret": fp.studySecret, "pii_key": fp.piiKey], at: now())
        if let loaded { try workspace.pin(loaded) }
        try workspace.checkpoint()
        return workspace
    }

    /// Opens the workspace at `directory`, and refuses (an integrity error) a database that does
    /// not reach the event its `audit.head` names — events removed, or study.db rolled back or
    /// replaced — unless `checkingAuditHead` is false (`cohort audit verify` reports it instead).
    public static func open(
        at directory: URL, actor: String, now: @escaping @Sendable () -> Date = { Date() }, options: StudyStore.OpenOptions = .init(),
        checkingAuditHead: Bool = true
    ) throws -> Workspace {
        let dbURL = directory.appendingPathComponent(StudyStore.fileName)
        guard FileManager.default.fileExists(atPath: dbURL.path) else {
            throw CohortError(.notFound, "no cohort workspace here (no \(StudyStore.fileName))", at: .init(file: directory.path),
                hint: "run `cohort init --dir \(directory.path)`, or pass --workspace <dir> (or set COHORT_WORKSPACE)")
        }
        let keystore = try Keystore.load(from: keysDirectory(of: directory))
        let store = try StudyStore(url: dbURL, piiKey: keystore.piiKey, options: options)
        let workspace = Workspace(directory: directory, store: store, keystore: keystore, actor: actor, now: now)
        // Checked before anything is written: the keys first (nothing encrypted can be read
        // with a wrong pii.key), then a shortened trail, then exports a killed command left open.
        try KeyCheck.verify(workspace)
        if checkingAuditHead, let problem = try workspace.auditHeadProblem() {
            throw CohortError(.integrity, problem, at: .init(file: workspace.auditHeadURL.path),
                hint: "run `cohort audit verify` for the details; restore study.db (with its audit trail) from a backup. Nothing was changed.")
        }
        try ExportRecovery.recoverIfPending(workspace, directory: directory, options: options, keystore: keystore)
        return workspace
    }

    /// Signs the audit chain's head (after every command that changed state) and writes it to
    /// `audit.head` atomically (temporary file, fsync, rename, fsync of the folder).
    @discardableResult
    public func checkpoint() throws -> AuditCheckpoint? {
        if !FileManager.default.fileExists(atPath: auditHeadURL.path), try !store.auditHeadFileEstablished(), try store.auditHead() != nil {
            // A workspace made before audit.head existed: start keeping it, visibly in the trail.
            try store.appendEvent(actor: actor, action: "audit.head.create", details: ["file": Self.auditHeadFileName], at: now())
        }
        guard let checkpoint = try store.checkpoint(signingKey: keystore.signingKey, at: now()) else { return nil }
        try writeAuditHead(checkpoint)
        return checkpoint
    }

    /// The signed head as `audit.head` stores it: the checkpoint JSON (seq, head_hash, and the
    /// Ed25519 signature over `cohort/audit-checkpoint@1 seq=<seq> head=<head_hash>`).
    struct AuditHeadFile: Codable {
        var format = "cohort/audit-head@1"
        var seq: Int64
        var headHash: String
        var signature: String
        var keyFingerprint: String

        enum CodingKeys: String, CodingKey {
            case format, seq, signature
            case headHash = "head_hash"
            case keyFingerprint = "key_fingerprint"
        }

        var checkpoint: AuditCheckpoint { AuditCheckpoint(seq: seq, headHash: headHash, signature: signature) }
    }

    func writeAuditHead(_ checkpoint: AuditCheckpoint) throws {
        let head = AuditHeadFile(
            seq: checkpoint.seq, headHash: checkpoint.headHash, signature: checkpoint.signature, keyFingerprint: keystore.publicKey.fingerprint)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var bytes = Array(try encoder.encode(head))
        bytes.append(0x0A)
        let temporary = directory.appendingPathComponent(".\(Self.auditHeadFileName).\(getpid()).tmp")
        func fail(_ what: String) -> CohortError {
            CohortError(.system, "cannot \(what) the audit head file", at: .init(file: auditHeadURL.path),
                hint: "check that the workspace folder is writable and the disk is not full (errno \(errno))")
        }
        let fd = Glibc.open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw fail("create") }
        var written = 0
        let ok = bytes.withUnsafeBytes { buffer -> Bool in
            while written < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress.map { $0 + written }, buffer.count - written)
                if n < 0 { if errno == EINTR { continue }; return false }
                written += n
            }
            return fsync(fd) == 0
        }
        close(fd)
        guard ok else {
            unlink(temporary.path)
            throw fail("write")
        }
        guard rename(temporary.path, auditHeadURL.path) == 0 else {
            unlink(temporary.path)
            throw fail("rename")
        }
        let dirFD = Glibc.open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFD >= 0 {
            _ = fsync(dirFD)
            close(dirFD)
        }
    }

    /// The checkpoint `audit.head` holds, or nil when there is no such file. Throws when the file
    /// cannot be read or its signature does not verify with the study key.
    public func auditHeadCheckpoint() throws -> AuditCheckpoint? {
        guard let data = FileManager.default.contents(atPath: auditHeadURL.path) else {
            if FileManager.default.fileExists(atPath: auditHeadURL.path) {
                throw CohortError(.integrity, "audit.head cannot be read", at: .init(file: auditHeadURL.path), hint: "check its permissions")
            }
            return nil
        }
        guard data.count < 64 * 1024, let head = try? JSONDecoder().decode(AuditHeadFile.self, from: data), head.format == "cohort/audit-head@1" else {
            throw CohortError(.integrity, "audit.head is not a cohort audit head (edited or damaged)", at: .init(file: auditHeadURL.path),
                hint: "restore it and study.db from a backup")
        }
        let checkpoint = head.checkpoint
        guard let signature = Base64.decode(checkpoint.signature), keystore.publicKey.isValidSignature(signature, for: checkpoint.signedBytes) else {
            throw CohortError(.integrity, "audit.head's signature does not verify with this study's key (edited, or from another study)",
                at: .init(file: auditHeadURL.path), hint: "restore it and study.db from a backup")
        }
        return checkpoint
    }

    /// What is wrong between the database and `audit.head`, in words; nil when the database
    /// reaches the signed head (it may have newer events).
    public func auditHeadProblem() throws -> String? {
        let checkpoint: AuditCheckpoint?
        do {
            checkpoint = try auditHeadCheckpoint()
        } catch let error as CohortError {
            return error.message
        }
        guard let checkpoint else {
            if try store.auditHeadFileEstablished() {
                return "audit.head is missing next to study.db (deleted?): removed events can no longer be ruled out"
            }
            return nil
        }
        guard let hash = try store.auditEventHash(seq: checkpoint.seq) else {
            let last = try store.auditHead()?.seq ?? 0
            return "the database ends at event \(last) but audit.head names event \(checkpoint.seq): events were removed "
                + "(study.db truncated, rolled back to an older copy, or replaced)"
        }
        if hash != checkpoint.headHash {
            return "event \(checkpoint.seq) in the database differs from the one audit.head names: study.db was replaced or its trail rewritten"
        }
        return nil
    }

    /// `cohort audit verify`: the chain recomputed (``StudyStore/verifyAudit(publicKey:)``) and
    /// compared with `audit.head`.
    public func verifyAudit() throws -> AuditVerification {
        var result = try store.verifyAudit(publicKey: keystore.publicKey)
        let head = try? auditHeadCheckpoint()
        result.auditHeadSeq = head.flatMap { $0 }?.seq
        if result.isIntact, let problem = try auditHeadProblem() {
            result.firstProblem = problem
            result.brokenAtSeq = head.flatMap { $0 }.map { min($0.seq, result.headSeq + 1) }
        }
        return result
    }

    /// Loads and pins a protocol file (with the templates it names) as the current revision.
    @discardableResult
    public func loadProtocol(_ url: URL) throws -> PinnedProtocol {
        let pinned = try pin(try ProtocolLoader.load(contentsOf: url))
        try checkpoint()
        return pinned
    }

    @discardableResult
    func pin(_ loaded: LoadedProtocol) throws -> PinnedProtocol {
        var templates: [String: Data] = [:]
        let root = loaded.source.map { $0.deletingLastPathComponent().deletingLastPathComponent() } ?? directory
        var paths = loaded.studyProtocol.consent.documents.map(\.template)
        if let reminder = loaded.studyProtocol.compliance.reminderTemplate { paths.append(reminder) }
        for path in paths {
            let url = root.appendingPathComponent(path)
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw CohortError(.notFound, "template '\(path)' named by the protocol cannot be read", at: .init(file: url.path))
            }
            templates[path] = data
        }
        return try store.pinProtocol(loaded, templates: templates, actor: actor, at: now())
    }

    /// The current protocol, or an error telling how to load one.
    public func currentProtocol() throws -> PinnedProtocol {
        guard let pinned = try store.currentProtocol() else {
            throw CohortError(.notFound, "no protocol is loaded in this workspace", hint: "run `cohort protocol load protocols/<study>.yaml`")
        }
        return pinned
    }
}
