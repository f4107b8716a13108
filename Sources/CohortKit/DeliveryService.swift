import CohortCore
public import CohortCrypto
public import CohortDelivery
public import CohortPackage
public import Foundation
public import CohortStore

/// `cohort deliver`: sends an export's files (the encrypted `.p7m`, or the archive, then the
/// signature, then the manifest) to an SFTP server through ``SFTPDelivery``, and records the
/// delivery in the audit trail — `export.delivered` (archive and file digests, destination host,
/// port and folder, the host key's fingerprint, bytes) or `export.delivery_failed` (the reason
/// class, the destination, the fingerprint seen). Never a credential, never the user name.
///
/// Before anything is sent the manifest's signature is checked with the workspace's key and
/// every file's SHA-256 against it: only what this workspace exported, unchanged, is delivered.
public enum DeliveryService {
    /// The files of the export whose manifest is `manifestURL`, checked against it.
    public static func files(manifestURL: URL, publicKey: Ed25519PublicKey) throws -> (manifest: ExportManifest, files: [DeliveryFile]) {
        let location = CohortError.Location(file: manifestURL.path)
        guard let bytes = FileManager.default.contents(atPath: manifestURL.path) else {
            throw CohortError(.notFound, "manifest not found", at: location, hint: "give the X.manifest.json that cohort export wrote")
        }
        let signatureURL = URL(fileURLWithPath: manifestURL.path + ".sig")
        guard let signature = FileManager.default.contents(atPath: signatureURL.path) else {
            throw CohortError(.notFound, "the manifest's signature is missing", at: .init(file: signatureURL.path))
        }
        guard publicKey.isValidSignature([UInt8](signature), for: [UInt8](bytes)) else {
            throw CohortError(.integrity, "the manifest's signature does not verify with this workspace's key", at: location, hint: "deliver only exports made by this workspace")
        }
        guard let manifest = try? JSONDecoder().decode(ExportManifest.self, from: bytes) else {
            throw CohortError(.integrity, "the manifest is not a readable export manifest", at: location)
        }
        let folder = manifestURL.deletingLastPathComponent()
        let data: DeliveryFile
        if let encrypted = manifest.encrypted {
            data = DeliveryFile(name: encrypted.fileName, localPath: folder.appendingPathComponent(encrypted.fileName).path, sha256: encrypted.sha256, size: encrypted.size)
        } else {
            data = DeliveryFile(
                name: manifest.archive.fileName, localPath: folder.appendingPathComponent(manifest.archive.fileName).path, sha256: manifest.archive.sha256,
                size: manifest.archive.size)
        }
        guard FileManager.default.fileExists(atPath: data.localPath) else {
            throw CohortError(.notFound, "the export's \(manifest.encrypted == nil ? "archive" : "encrypted archive") is not beside its manifest", at: .init(file: data.localPath))
        }
        let (sha256, size) = try SHA256Hasher.digest(ofFile: data.localPath)
        guard sha256 == data.sha256, size == data.size else {
            throw CohortError(.integrity, "the file differs from what the signed manifest names; it was not delivered", at: .init(file: data.localPath), hint: "run cohort verify on it")
        }
        let signatureFile = DeliveryFile(
            name: signatureURL.lastPathComponent, localPath: signatureURL.path, sha256: SHA256.hex([UInt8](signature)), size: UInt64(signature.count))
        let manifestFile = DeliveryFile(name: manifestURL.lastPathComponent, localPath: manifestURL.path, sha256: SHA256.hex([UInt8](bytes)), size: UInt64(bytes.count))
        return (manifest, [data, signatureFile, manifestFile])
    }

    /// Delivers the export of `manifestURL` and appends the audit event either way.
    public static func deliver(
        manifestURL: URL, to destination: SFTPDestination, knownHosts: String, identity: String?, connectTimeout: Int, workspace: Workspace,
        progress: (_ sent: UInt64, _ total: UInt64) -> Void = { _, _ in }
    ) throws -> DeliveryResult {
        guard FileManager.default.isReadableFile(atPath: knownHosts) else {
            throw CohortError(
                .notFound, "known-hosts file not found", at: .init(file: knownHosts),
                hint: "pin the server's host key first: ssh-keyscan -p PORT HOST > known_hosts, and check its fingerprint with the server's administrator")
        }
        if let identity, !FileManager.default.isReadableFile(atPath: identity) {
            throw CohortError(.notFound, "identity key not found", at: .init(file: identity))
        }
        let (manifest, files) = try Self.files(manifestURL: manifestURL, publicKey: VerifyService.signerKey(manifest: manifestURL, workspace: workspace))
        var details = [
            "archive_sha256": manifest.archive.sha256, "host": destination.host, "port": String(destination.port),
            "path": destination.fromHome ? "~/" + destination.path : destination.path,
        ]
        if let encrypted = manifest.encrypted { details["encrypted_sha256"] = encrypted.sha256 }
        let result: DeliveryResult
        do {
            result = try SFTPDelivery.deliver(files, to: destination, knownHosts: knownHosts, identity: identity, connectTimeout: connectTimeout, progress: progress)
        } catch let failure {
            details["reason"] = failure.reason.rawValue
            if let seen = failure.hostKeyFingerprint { details["host_key"] = seen }
            try workspace.store.appendEvent(actor: workspace.actor, action: "export.delivery_failed", subject: manifest.study.id, details: details, at: workspace.now())
            try workspace.checkpoint()
            throw failure.error
        }
        details["host_key"] = result.hostKeyFingerprint
        details["bytes"] = String(result.bytes)
        details["files"] = files.map(\.name).joined(separator: ",")
        if !result.resumed.isEmpty { details["resumed"] = result.resumed.joined(separator: ",") }
        if !result.alreadyThere.isEmpty { details["already_there"] = result.alreadyThere.joined(separator: ",") }
        try workspace.store.appendEvent(actor: workspace.actor, action: "export.delivered", subject: manifest.study.id, details: details, at: workspace.now())
        try workspace.checkpoint()
        return result
    }

    /// The `export.delivered` events of the trail that name the archive with this SHA-256, oldest first.
    public static func deliveries(archiveSHA256: String, workspace: Workspace) throws -> [AuditEvent] {
        try workspace.store.auditEvents().filter { $0.action == "export.delivered" && $0.details["archive_sha256"] == archiveSHA256 }
    }
}
