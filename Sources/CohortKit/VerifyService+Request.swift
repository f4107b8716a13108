public import CohortCrypto
public import CohortPackage
public import Foundation
import CohortCore

extension VerifyService {
    /// Verifies `archive` as `cohort verify` does: the key comes from `publicKeyFile`, else from
    /// `workspace`; with neither, a usage-level invalid-input error says what to pass. A missing
    /// archive is one not-found error (nothing else is checked), not a list of failed checks.
    /// `progress` gets (bytes of the archive read so far, archive size), as ``Verifier`` reports it.
    public static func verify(
        archive: URL, manifest: URL?, publicKeyFile: URL?, workspace: Workspace?,
        progress: (@Sendable (_ bytesRead: UInt64, _ totalBytes: UInt64) -> Void)? = nil
    ) throws -> VerificationReport {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: archive.path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw CohortError(.notFound, "no such archive", at: .init(file: archive.path), hint: "give the .tar.gz file `cohort export` wrote (its path is printed after the export)")
        }
        if let manifest, !FileManager.default.fileExists(atPath: manifest.path) {
            throw CohortError(.notFound, "no such manifest", at: .init(file: manifest.path), hint: "omit --manifest to use the one next to the archive")
        }
        let key = try publicKey(publicKeyFile, workspace, manifest: manifest ?? ManifestSigner.manifestURL(forArchive: archive))
        return try verify(archive: archive, manifest: manifest, publicKey: key, workspace: workspace, progress: progress)
    }

    /// Verifies the encrypted `X.tar.gz.p7m` as `cohort verify --decrypt-key` does; the key comes as
    /// in ``verify(archive:manifest:publicKeyFile:workspace:progress:)``.
    public static func verifyEncrypted(
        _ encrypted: URL, manifest: URL?, publicKeyFile: URL?, workspace: Workspace?, decryptKeyPEM: [UInt8],
        recipientCertificate: RecipientCertificate, progress: (@Sendable (_ bytesRead: UInt64, _ totalBytes: UInt64) -> Void)? = nil
    ) throws -> VerificationReport {
        if let manifest, !FileManager.default.fileExists(atPath: manifest.path) {
            throw CohortError(.notFound, "no such manifest", at: .init(file: manifest.path), hint: "omit --manifest to use the one next to the archive")
        }
        let key = try publicKey(
            publicKeyFile, workspace, manifest: manifest ?? ManifestSigner.manifestURL(forArchive: encrypted.deletingPathExtension()))
        return try verifyEncrypted(
            encrypted, manifest: manifest, publicKey: key, workspace: workspace, decryptKeyPEM: decryptKeyPEM,
            recipientCertificate: recipientCertificate, progress: progress)
    }

    /// The key given, else (with a workspace) the key the trail registers under the fingerprint the
    /// manifest names as its signer — another site's or the owner's — else the workspace's own.
    /// The key the workspace's trail registers under the fingerprint the manifest at `manifest`
    /// names as its signer (another site's, the owner's), else the workspace's own key.
    static func signerKey(manifest: URL, workspace: Workspace) throws -> Ed25519PublicKey {
        if let data = FileManager.default.contents(atPath: manifest.path), let parsed = try? JSONDecoder().decode(ExportManifest.self, from: data),
            let key = try workspace.signingKeys().entry(fingerprint: parsed.signer.keyFingerprint)?.key
        {
            return key
        }
        return workspace.keystore.publicKey
    }

    private static func publicKey(_ publicKeyFile: URL?, _ workspace: Workspace?, manifest: URL) throws -> Ed25519PublicKey {
        if let publicKeyFile { return try StudyPublicKey.load(publicKeyFile) }
        if let workspace { return try signerKey(manifest: manifest, workspace: workspace) }
        throw CohortError.invalid("no public key to check the signature with", field: "public-key", hint: "give --public-key signing.pub.pem (or --workspace DIR)")
    }
}
