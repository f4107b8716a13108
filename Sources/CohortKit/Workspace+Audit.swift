public import CohortCore
import CohortCrypto
import CohortIO
public import CohortStore
import Foundation

/// The workspace's audit head: signed checkpoints of the audit chain kept in `audit.head`, and
/// `cohort audit verify`.
extension Workspace {
    /// Signs the audit chain's head (after every command that changed state) and writes it to
    /// `audit.head` atomically (CohortIO's `PartialFile`: temporary file, fsync, rename, fsync of
    /// the folder — a folder that cannot be synced fails the command).
    @discardableResult
    public func checkpoint() throws -> AuditCheckpoint? {
        if !FileManager.default.fileExists(atPath: auditHeadURL.path), try !store.auditHeadFileEstablished(), try store.auditHead() != nil {
            // A workspace made before audit.head existed: start keeping it, visibly in the trail.
            try store.appendEvent(actor: actor, action: "audit.head.create", details: ["file": Self.auditHeadFileName], at: now())
        }
        let signed: AuditCheckpoint?
        do {
            signed = try store.checkpoint(signingKey: keystore.signingKey, at: now())
        } catch let error as CohortError where error.code == .integrity && error.location?.field == "audit_checkpoints.signature" {
            // A head another site's registered key signed is the study's checkpoint too. Looked up
            // only then, so a single-site workspace reads no registry per command.
            signed = try store.checkpoint(
                signingKey: keystore.signingKey, accepting: try signingKeys().checkpointSigners(fallback: keystore.publicKey), at: now())
        }
        guard let checkpoint = signed else { return nil }
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
        do {
            let file = try PartialFile(finalURL: auditHeadURL, permissions: 0o600, replacing: true)
            try file.write(bytes)
            try file.replace()
        } catch let error as CohortError {
            throw CohortError(
                .system, "cannot write the audit head file (\(error.message))", at: .init(file: auditHeadURL.path),
                hint: "check that the workspace folder is writable and the disk is not full", underlying: error.underlying)
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
        guard let signature = Base64.decode(checkpoint.signature),
            try keystore.publicKey.isValidSignature(signature, for: checkpoint.signedBytes)
                || signingKeys().checkpointSigners(fallback: keystore.publicKey).signer(of: checkpoint) != nil
        else {
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

    /// `cohort audit verify`: the chain recomputed (``StudyStore/verifyAudit(signers:)``, each
    /// checkpoint signed by a key the trail registered before it), the registrations checked,
    /// and the chain compared with `audit.head`.
    public func verifyAudit() throws -> AuditVerification {
        let registry = try signingKeys()
        var result = try store.verifyAudit(signers: registry.checkpointSigners(fallback: keystore.publicKey))
        if result.isIntact, let problem = registry.problems.first {
            result.firstProblem = problem
        }
        let head = try? auditHeadCheckpoint()
        result.auditHeadSeq = head.flatMap { $0 }?.seq
        if result.isIntact, let problem = try auditHeadProblem() {
            result.firstProblem = problem
            result.brokenAtSeq = head.flatMap { $0 }.map { min($0.seq, result.headSeq + 1) }
        }
        return result
    }
}
