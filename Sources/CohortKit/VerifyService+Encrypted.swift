public import CohortCrypto
public import CohortPackage
public import Foundation
import CohortCore

extension VerifyService {
    /// The recipient's side of an encrypted export (`X.tar.gz.p7m`): its digest and size against
    /// the signed manifest's `encrypted` block, the recipient certificate against the manifest's
    /// list, then decryption with the recipient's key into a private temporary folder (0700,
    /// removed afterwards) and every check of ``verify(archive:manifest:publicKey:workspace:progress:)``
    /// on the plaintext archive. A file that does not decrypt (wrong key, altered bytes — GCM
    /// authenticates the content) is a failed check, not a thrown error.
    public static func verifyEncrypted(
        _ encrypted: URL, manifest: URL?, publicKey: Ed25519PublicKey, workspace: Workspace?, decryptKeyPEM: [UInt8],
        recipientCertificate: RecipientCertificate, progress: (@Sendable (_ bytesRead: UInt64, _ totalBytes: UInt64) -> Void)? = nil
    ) throws -> VerificationReport {
        let plaintextName = encrypted.deletingPathExtension().lastPathComponent
        let manifestURL = manifest ?? ManifestSigner.manifestURL(forArchive: encrypted.deletingPathExtension())
        guard FileManager.default.fileExists(atPath: encrypted.path) else {
            throw CohortError(.notFound, "encrypted archive not found", at: .init(file: encrypted.path))
        }
        let described = (try? Data(contentsOf: manifestURL)).flatMap { try? JSONDecoder().decode(ExportManifest.self, from: $0) }?.encrypted
        var checks: [VerificationCheck] = []
        let (sha256, size) = try SHA256Hasher.digest(ofFile: encrypted.path)
        if let described {
            let matches = described.sha256 == sha256 && described.size == size && described.fileName == encrypted.lastPathComponent
            checks.append(
                VerificationCheck(
                    name: "encrypted file", passed: matches,
                    detail: matches
                        ? "\(size) bytes, SHA-256 \(sha256.prefix(16))… as the manifest says (\(described.cipher), \(described.recipients.count) recipient(s))"
                        : "the .p7m is not the one the manifest names (SHA-256 \(sha256.prefix(16))…, \(size) bytes; manifest: \(described.sha256.prefix(16))…, \(described.size) bytes)"))
            let listed = described.recipients.contains { $0.certificateSHA256 == recipientCertificate.fingerprint }
            checks.append(
                VerificationCheck(
                    name: "recipient certificate", passed: listed,
                    detail: listed
                        ? "\(recipientCertificate.subjectName) (SHA-256 \(recipientCertificate.fingerprint.prefix(16))…) is one of the manifest's recipients"
                        : "the manifest does not name this certificate (SHA-256 \(recipientCertificate.fingerprint.prefix(16))…) as a recipient"))
        } else {
            checks.append(VerificationCheck(name: "encrypted file", passed: false, detail: "the manifest has no encrypted block (or could not be read): nothing says what this .p7m should be"))
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-decrypt-" + UUID().uuidString, isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: folder) }
        let plaintext = folder.appendingPathComponent(plaintextName)
        do {
            try CMSEnvelope.decrypt(input: encrypted.path, output: plaintext.path, privateKeyPEM: decryptKeyPEM, certificate: recipientCertificate)
        } catch let error as CohortError where error.code == .security || error.code == .integrity {
            checks.append(VerificationCheck(name: "decryption", passed: false, detail: error.message))
            return VerificationReport(archive: encrypted.path, checks: checks)
        }
        checks.append(VerificationCheck(name: "decryption", passed: true, detail: described?.cipher == CMSEnvelope.ContentCipher.aes256CBC.rawValue
                    ? "decrypted with the recipient's key (AES-256-CBC: the archive digest below authenticates it)"
                    : "decrypted with the recipient's key; AES-256-GCM authenticated the content"))
        let inner = try verify(archive: plaintext, manifest: manifestURL, publicKey: publicKey, workspace: workspace, progress: progress)
        return VerificationReport(archive: encrypted.path, checks: checks + inner.checks)
    }
}
