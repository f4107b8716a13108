package import Foundation
package import CohortCore
package import CohortCompression
import CohortCrypto
import CohortIO

/// Archives a finished bag and publishes it with its signed manifest, all or nothing.
///
/// Order of work:
/// 1. the archive is written to `.<X.tar.gz>.partial-<random>` (hashed as it is written) and synced;
/// 2. `makeManifest` runs: the archive is durable but no final name exists yet, so this is where
///    the caller commits its audit event naming the archive's SHA-256 (two-phase export: a
///    verifiable export never exists that the audit trail does not name). The manifest it returns
///    is encoded, signed, and written to `.<X.manifest.json>.partial-…` and
///    `.<X.manifest.json.sig>.partial-…`, each synced;
/// 3. the final names appear in this order: signature, manifest, archive (last), then the
///    directory is synced.
///
/// So a final-named archive exists only when its manifest and signature do; a crash between the
/// renames leaves a manifest without an archive, which `cohort verify` rejects ("archive
/// missing"). On any error the temporary files — and any final name already created — are
/// removed, and nothing final-named is left.
package enum ExportPackager {
    /// Archives `bagDirectory` to `archiveURL` and publishes it with `X.manifest.json(.sig)`.
    ///
    /// - Parameters:
    ///   - makeManifest: builds the manifest once the archive's digest and size are known and
    ///     the archive is synced, before any final name appears (commit the audit event here); its
    ///     `signer` is set to `signer`'s key. When it throws, nothing is published.
    /// - Throws: `.conflict` when any of the three final names exists; errors from writing,
    ///   signing, or `makeManifest`.
    ///   - encryption: encrypts the archive to recipient certificates as `X.tar.gz.p7m` (CMS) before
    ///     `makeManifest` runs (its ``ArchiveResult/encrypted`` names the `.p7m`, which the
    ///     manifest records); the plaintext `.tar.gz` is published only when asked to keep it.
    ///   - deflated: payload files deflated as they were written (``DeflateSpool``): copied into
    ///     the archive rather than compressed again (the archive holds the same files either way).
    public static func publish(
        bagDirectory: URL, archiveURL: URL, createdAt: Timestamp, level: Int = 6, signer: ManifestSigner,
        encryption: ExportEncryption? = nil, deflated: DeflateSpool? = nil, makeManifest: (ArchiveResult) throws -> ExportManifest
    ) throws -> PublishedExport {
        try publish(
            bagDirectory: bagDirectory, archiveURL: archiveURL, createdAt: createdAt, level: level, signer: signer,
            encryption: encryption, deflated: deflated, faultAfterBytes: nil, makeManifest: makeManifest)
    }

    /// `faultAfterBytes` (tests only) makes the archive sink fail after that many bytes.
    static func publish(
        bagDirectory: URL, archiveURL: URL, createdAt: Timestamp, level: Int, signer: ManifestSigner,
        encryption: ExportEncryption? = nil, deflated: DeflateSpool? = nil, faultAfterBytes: UInt64?,
        makeManifest: (ArchiveResult) throws -> ExportManifest
    ) throws -> PublishedExport {
        let encryptedURL = ExportEncryption.encryptedURL(forArchive: archiveURL)
        for url in [archiveURL, encryptedURL, ManifestSigner.manifestURL(forArchive: archiveURL), ManifestSigner.signatureURL(forArchive: archiveURL)]
        where FileManager.default.fileExists(atPath: url.path) {
            throw CohortError(
                .conflict, "output file already exists", at: CohortError.Location(file: url.path),
                hint: "choose another output directory or remove the old export")
        }
        var (archiveFile, archive) = try ArchiveWriter.writePartial(
            bagDirectory: bagDirectory, to: archiveURL, createdAt: createdAt, level: level, deflated: deflated, faultAfterBytes: faultAfterBytes)
        var dataFiles = [archiveFile]
        if let encryption {
            let encryptedFile = try PartialFile(finalURL: encryptedURL)
            try encryptedFile.syncAndClose()
            try CMSEnvelope.encrypt(
                input: archiveFile.temporaryPath, output: encryptedFile.temporaryPath, to: encryption.recipients, cipher: encryption.cipher)
            let (sha256, size) = try SHA256Hasher.digest(ofFile: encryptedFile.temporaryPath)
            archive.encrypted = ExportManifest.Encrypted(
                fileName: encryptedURL.lastPathComponent, sha256: sha256, size: size, cipher: encryption.cipher.rawValue,
                recipients: encryption.recipients.map { .init(certificateSHA256: $0.fingerprint, subject: $0.subjectName) })
            dataFiles = encryption.keepPlaintext ? [encryptedFile, archiveFile] : [encryptedFile]
        }
        var manifest = try makeManifest(archive)
        manifest.encrypted = archive.encrypted
        let partial = try signer.writePartial(manifest, forArchive: archiveURL)
        var published: [String] = []
        do {
            for file in [partial.signature, partial.manifest] + dataFiles {
                try file.commit()
                published.append(file.finalPath)
            }
            try FileSystem.syncDirectory(archiveURL.deletingLastPathComponent().path)
        } catch {
            for path in published.reversed() { unlink(path) }
            throw error
        }
        return PublishedExport(archive: archive, signed: partial.result)
    }
}
