public import Foundation
public import CohortCrypto
import CohortCore
import CohortIO

/// Encodes and signs an ``ExportManifest`` and writes it beside its archive.
///
/// For an archive `X.tar.gz` it writes `X.manifest.json` (``ExportManifest/encoded()``) and
/// `X.manifest.json.sig` (the raw 64-byte Ed25519 signature over exactly those bytes). Each goes
/// to a temporary name, is synced, and is renamed into place — the signature first, then the
/// manifest — so a final-named manifest always has its signature beside it.
public struct ManifestSigner: Sendable {
    /// The study's signing key.
    public let key: Ed25519PrivateKey
    /// The site `key` belongs to (a site's key in a multi-site study); nil for the owner's.
    public let site: String?

    /// A signer using `key`, a key of `site` when given.
    public init(key: Ed25519PrivateKey, site: String? = nil) {
        self.key = key
        self.site = site
    }

    /// `X` for `X.tar.gz` (or `X.tgz`); otherwise the name without its last extension.
    public static func baseName(ofArchive archiveURL: URL) -> String {
        let name = archiveURL.lastPathComponent
        for suffix in [".tar.gz", ".tgz"] where name.hasSuffix(suffix) && name.count > suffix.count {
            return String(name.dropLast(suffix.count))
        }
        return archiveURL.deletingPathExtension().lastPathComponent
    }

    /// `X.manifest.json` beside `X.tar.gz`.
    public static func manifestURL(forArchive archiveURL: URL) -> URL {
        archiveURL.deletingLastPathComponent().appendingPathComponent(baseName(ofArchive: archiveURL) + ".manifest.json")
    }

    /// `X.manifest.json.sig` beside `X.tar.gz`.
    public static func signatureURL(forArchive archiveURL: URL) -> URL {
        archiveURL.deletingLastPathComponent().appendingPathComponent(baseName(ofArchive: archiveURL) + ".manifest.json.sig")
    }

    /// `manifest` with its `signer` set to this key.
    public func stamped(_ manifest: ExportManifest) -> ExportManifest {
        var manifest = manifest
        manifest.signer = ExportManifest.Signer(keyFingerprint: key.publicKey.fingerprint, site: site)
        return manifest
    }

    /// Writes and signs `manifest` (its `signer` set to this key) beside the archive at
    /// `archiveURL`, which should already be in place; see ``ExportPackager`` to publish all
    /// three files together.
    ///
    /// - Throws: `.conflict` when a manifest or signature file already exists; `.system` for
    ///   I/O or signing failures.
    public func write(_ manifest: ExportManifest, forArchive archiveURL: URL) throws -> SignedManifest {
        let partial = try writePartial(manifest, forArchive: archiveURL)
        try partial.signature.commit()
        do {
            try partial.manifest.commit()
        } catch {
            unlink(partial.signature.finalPath)
            throw error
        }
        try FileSystem.syncDirectory(archiveURL.deletingLastPathComponent().path)
        return partial.result
    }

    /// Writes manifest and signature under temporary names, synced, not yet published.
    func writePartial(_ manifest: ExportManifest, forArchive archiveURL: URL) throws
        -> (manifest: PartialFile, signature: PartialFile, result: SignedManifest)
    {
        let stamped = stamped(manifest)
        let bytes = try stamped.encoded()
        let signature = try key.signature(for: bytes)
        let manifestURL = Self.manifestURL(forArchive: archiveURL)
        let signatureURL = Self.signatureURL(forArchive: archiveURL)
        let manifestFile = try PartialFile(finalURL: manifestURL)
        try manifestFile.write(bytes)
        try manifestFile.syncAndClose()
        let signatureFile = try PartialFile(finalURL: signatureURL)
        try signatureFile.write(signature)
        try signatureFile.syncAndClose()
        return (manifestFile, signatureFile, SignedManifest(manifestURL: manifestURL, signatureURL: signatureURL, manifest: stamped))
    }
}
