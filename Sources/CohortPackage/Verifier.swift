package import Foundation
package import CohortCrypto
import CohortCore
import CohortIO

/// Verifies an export — archive, manifest, signature — with nothing but the study's public key.
///
/// Every check that can run does run (a failure stops nothing), and each is reported by name:
/// signature; signer key; manifest format; archive size and digest; gzip integrity and tar
/// structure (one streaming pass that also hashes every member and counts its rows, without
/// extracting); the bag (`bagit.txt`, `manifest-sha256.txt`, `tagmanifest-sha256.txt`,
/// `Payload-Oxum`); every file of the signed manifest (digest, size, rows) and no file outside
/// it; the audit checkpoint's signature. Extra checks, when given, run on a temporary
/// extraction of the bag that is removed afterwards.
///
/// Bounded work, whatever the files hold: the manifest is read only up to ``maxManifestBytes``
/// (16 MiB) and the signature up to ``maxSignatureBytes`` (1 KiB); the archive's size is compared
/// with the manifest's before a byte is inflated (a mismatch stops there); and decompression
/// stops as soon as its output passes what the manifest's files account for
/// (``inflateLimit(for:)``), so a gzip bomb costs a few megabytes of work, not gigabytes.
/// Without a readable manifest the archive is not inflated at all.
package enum Verifier {
    /// The largest manifest read (a real one is a few kilobytes per thousand files).
    package static let maxManifestBytes = 16 << 20
    /// The largest signature file read (an Ed25519 signature is 64 bytes).
    package static let maxSignatureBytes = 1 << 10

    /// The most decompressed bytes an archive may produce: the manifest's file sizes, each
    /// rounded up to tar's 512-byte blocks, plus 8 KiB per file (tar and pax headers, folders)
    /// and 1 MiB (end blocks and padding).
    package static func inflateLimit(for manifest: ExportManifest) -> UInt64 {
        var limit: UInt64 = 1 << 20
        for file in manifest.files {
            let (padded, overflow) = file.size.addingReportingOverflow(511)
            guard !overflow else { return .max }
            let (next, overflowNext) = limit.addingReportingOverflow((padded / 512) * 512 + 8 * 1024)
            guard !overflowNext else { return .max }
            limit = next
        }
        return limit
    }

    /// The bytes of `url`, at most `cap` of them: `.tooLarge` when the file holds more.
    enum CappedRead {
        case bytes([UInt8])
        case missing
        case tooLarge
    }

    static func read(_ url: URL, cap: Int) -> CappedRead {
        guard let file = try? ReadableFile(path: url.path) else { return .missing }
        // Grows with what the file holds, never past the cap (plus one chunk).
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: min(cap + 1, 64 * 1024))
        while bytes.count <= cap {
            let count = (try? chunk.withUnsafeMutableBytes { try file.read(into: $0) }) ?? -1
            if count < 0 { return .missing }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        guard bytes.count <= cap else { return .tooLarge }
        return .bytes(bytes)
    }

    /// Verifies the export at `archive`.
    ///
    /// - Parameters:
    ///   - manifest: defaults to `X.manifest.json` beside `X.tar.gz`.
    ///   - signature: defaults to `X.manifest.json.sig` beside `X.tar.gz`.
    ///   - publicKey: the study's signing key (public half).
    ///   - extraChecks: run on the extracted bag (e.g. residual-PII scan); extraction happens
    ///     only when this is not empty, and writes only the files some check reads
    ///     (``ExtraVerificationCheck/reads``).
    ///   - progress: called while the archive is read with (bytes read so far, archive size):
    ///     increasing counts, the last one equal to the size. Not called when the archive is not
    ///     read (missing, or its size contradicts the signed manifest). Extra checks run after.
    public static func verify(
        archive: URL, manifest: URL? = nil, signature: URL? = nil, publicKey: Ed25519PublicKey,
        extraChecks: [ExtraVerificationCheck] = [], progress: (@Sendable (_ bytesRead: UInt64, _ totalBytes: UInt64) -> Void)? = nil
    ) -> VerificationReport {
        let manifestURL = manifest ?? ManifestSigner.manifestURL(forArchive: archive)
        let signatureURL = signature ?? ManifestSigner.signatureURL(forArchive: archive)
        let signed = SignedFiles(manifestURL: manifestURL, signatureURL: signatureURL)
        var checks = [
            signed.manifestBytes == nil ? fail(VerificationCheck.signature, signed.manifestProblem)
                : signed.signatureBytes == nil ? fail(VerificationCheck.signature, signed.signatureProblem)
                : signatureCheck(signed.manifestBytes, signed.signatureBytes, publicKey, manifestURL, signatureURL)
        ]
        let (parsed, formatCheck) = manifestFormat(signed)
        checks.append(formatCheck)
        checks.append(signerKeyCheck(parsed, publicKey))

        // One pass over the archive.
        let extractionRoot = extraChecks.isEmpty ? nil : temporaryExtractionFolder()
        defer { if let extractionRoot { try? FileManager.default.removeItem(at: extractionRoot) } }
        let extracting = { (path: String) in extraChecks.contains { $0.reads.includes(path) } }
        let scan = scanArchive(archive, parsed: parsed, extractTo: extractionRoot, extracting: extracting, progress: progress)
        checks += archiveChecks(scan, parsed)
        checks += contentChecks(BagChecks.run(scan) + signedFileChecks(scan, parsed), scan: scan)
        checks.append(checkpointCheck(parsed, publicKey))
        checks += extraChecks.map { run($0, on: scan) }
        return VerificationReport(archive: archive.path, checks: checks)
    }

    /// The manifest and signature files, each read up to its cap, with what to say when one is not.
    private struct SignedFiles {
        var manifestBytes: [UInt8]?
        var manifestProblem: String
        var signatureBytes: [UInt8]?
        var signatureProblem: String

        init(manifestURL: URL, signatureURL: URL) {
            manifestProblem = "manifest file missing: \(manifestURL.lastPathComponent)"
            switch Verifier.read(manifestURL, cap: Verifier.maxManifestBytes) {
            case .bytes(let bytes): manifestBytes = bytes
            case .missing: break
            case .tooLarge: manifestProblem = "manifest file is larger than \(Verifier.maxManifestBytes >> 20) MiB: not read"
            }
            signatureProblem = "signature file missing: \(signatureURL.lastPathComponent)"
            switch Verifier.read(signatureURL, cap: Verifier.maxSignatureBytes) {
            case .bytes(let bytes): signatureBytes = bytes
            case .missing: break
            case .tooLarge: signatureProblem = "signature file is larger than \(Verifier.maxSignatureBytes) bytes, expected 64: not read"
            }
        }
    }

    /// The manifest, when it is one of this format, and the check that says so.
    private static func manifestFormat(_ signed: SignedFiles) -> (ExportManifest?, VerificationCheck) {
        guard let manifestBytes = signed.manifestBytes else { return (nil, fail(VerificationCheck.manifestFormat, signed.manifestProblem)) }
        guard let value = try? JSONDecoder().decode(ExportManifest.self, from: Data(manifestBytes)) else {
            return (nil, fail(VerificationCheck.manifestFormat, "manifest is not a valid export manifest"))
        }
        guard value.format == ExportManifest.currentFormat else {
            return (nil, fail(VerificationCheck.manifestFormat, "unknown format \(ArchiveScan.quote(value.format))"))
        }
        return (value, VerificationCheck(name: VerificationCheck.manifestFormat, passed: true, detail: value.format))
    }

    /// Whether the manifest names the key the archive is verified with.
    private static func signerKeyCheck(_ parsed: ExportManifest?, _ publicKey: Ed25519PublicKey) -> VerificationCheck {
        guard let parsed else { return fail(VerificationCheck.signerKey, "not checked: no readable manifest") }
        let expected = publicKey.fingerprint
        let actual = parsed.signer.keyFingerprint
        return parsed.signer.algorithm == "Ed25519" && actual == expected
            ? VerificationCheck(name: VerificationCheck.signerKey, passed: true, detail: "Ed25519 \(actual)")
            : fail(VerificationCheck.signerKey, "manifest names \(parsed.signer.algorithm) \(actual), key is \(expected)")
    }

    /// A new private folder for the extracted bag, or nil when none can be made (the extra
    /// checks then say they did not run).
    private static func temporaryExtractionFolder() -> URL? {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-verify-" + UUID().uuidString)
        let made: Void? = try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return made == nil ? nil : root
    }

    /// The one pass over the archive, bounded by the signed manifest: an archive whose size
    /// differs from the manifest's, or without a readable manifest, is not read or inflated.
    private static func scanArchive(
        _ archive: URL, parsed: ExportManifest?, extractTo extractionRoot: URL?, extracting: (String) -> Bool,
        progress: (@Sendable (_ bytesRead: UInt64, _ totalBytes: UInt64) -> Void)?
    ) -> ArchiveScan {
        var onDisk = stat()
        if let parsed, stat(archive.path, &onDisk) == 0, UInt64(onDisk.st_size) != parsed.archive.size {
            // A different size fails the check anyway: nothing is read or inflated.
            return ArchiveScan(
                notRead: "the archive is \(onDisk.st_size) bytes but the signed manifest says \(parsed.archive.size): not read or inflated",
                size: UInt64(onDisk.st_size))
        } else if let parsed {
            let total = UInt64(onDisk.st_size)
            return ArchiveScan.run(
                archive: archive, extractTo: extractionRoot, extracting: extracting, inflateLimit: inflateLimit(for: parsed),
                progress: progress.map { report in { (read: UInt64) in report(read, total) } })
        } else if stat(archive.path, &onDisk) == 0 {
            return ArchiveScan(notRead: "not read: without a readable manifest nothing bounds decompression", size: UInt64(onDisk.st_size))
        }
        return ArchiveScan.run(archive: archive, extractTo: nil, inflateLimit: 0)
    }

    /// An extra check on the extracted bag, or why it did not run.
    private static func run(_ extra: ExtraVerificationCheck, on scan: ArchiveScan) -> VerificationCheck {
        guard let bag = scan.extractedBag else { return fail(extra.name, "not run: the archive could not be extracted completely") }
        do {
            return try extra.run(bag)
        } catch let error as CohortError {
            return fail(extra.name, error.message)
        } catch {
            return fail(extra.name, "check could not run")
        }
    }

    private static func fail(_ name: String, _ detail: String) -> VerificationCheck {
        VerificationCheck(name: name, passed: false, detail: detail)
    }

    /// The checks of what the archive holds, as far as they can be trusted: when the gzip stream
    /// is damaged, the archive was not read completely and nothing read from it is vouched for by
    /// its CRC — a check that found no problem did not run (it says so and fails), and one that
    /// found a file missing says the file may lie past the damage rather than blaming the bag.
    static func contentChecks(_ checks: [VerificationCheck], scan: ArchiveScan) -> [VerificationCheck] {
        guard scan.openProblem == nil, let damage = scan.gzipProblem else { return checks }
        let read = "\(scan.files.count) file(s) could be read before the damage"
        return checks.map { check in
            guard !check.detail.hasPrefix("not checked") else { return check }
            if check.passed {
                return fail(check.name, "not checked: the gzip stream is damaged (\(damage)); \(read), and none is vouched for by its CRC")
            }
            return fail(check.name, "not checked to the end: the gzip stream is damaged; \(read). Found so far: \(check.detail)")
        }
    }

    private static func signatureCheck(
        _ manifest: [UInt8]?, _ signature: [UInt8]?, _ key: Ed25519PublicKey, _ manifestURL: URL, _ signatureURL: URL
    ) -> VerificationCheck {
        let name = VerificationCheck.signature
        guard let manifest else { return fail(name, "manifest file missing: \(manifestURL.lastPathComponent)") }
        guard let signature else { return fail(name, "signature file missing: \(signatureURL.lastPathComponent)") }
        guard signature.count == 64 else { return fail(name, "signature file is \(signature.count) bytes, expected 64") }
        guard key.isValidSignature(signature, for: manifest) else {
            return fail(name, "Ed25519 signature does not verify with \(key.fingerprint)")
        }
        return VerificationCheck(name: name, passed: true, detail: "Ed25519 \(key.fingerprint)")
    }

    private static func archiveChecks(_ scan: ArchiveScan, _ manifest: ExportManifest?) -> [VerificationCheck] {
        var checks: [VerificationCheck] = []
        if let problem = scan.openProblem {
            checks.append(fail(VerificationCheck.archiveSize, problem))
            checks.append(fail(VerificationCheck.archiveDigest, problem))
            checks.append(fail(VerificationCheck.gzipIntegrity, "not checked: \(problem)"))
            checks.append(fail(VerificationCheck.tarStructure, "not checked: \(problem)"))
            return checks
        }
        if let manifest {
            checks.append(
                manifest.archive.size == scan.size
                    ? VerificationCheck(name: VerificationCheck.archiveSize, passed: true, detail: "\(scan.size) bytes")
                    : fail(VerificationCheck.archiveSize, "expected \(manifest.archive.size) bytes got \(scan.size)"))
            checks.append(
                manifest.archive.sha256.lowercased() == scan.sha256
                    ? VerificationCheck(name: VerificationCheck.archiveDigest, passed: true, detail: "SHA-256 \(scan.sha256)")
                    : fail(VerificationCheck.archiveDigest, "expected \(manifest.archive.sha256) got \(scan.sha256)"))
        } else {
            checks.append(fail(VerificationCheck.archiveSize, "not checked: no readable manifest (archive is \(scan.size) bytes)"))
            checks.append(fail(VerificationCheck.archiveDigest, "not checked: no readable manifest (SHA-256 \(scan.sha256))"))
        }
        checks.append(
            scan.gzipProblem.map { fail(VerificationCheck.gzipIntegrity, $0) }
                ?? VerificationCheck(name: VerificationCheck.gzipIntegrity, passed: true, detail: "CRC-32 and length match"))
        if scan.gzipProblem != nil && scan.tarProblems.isEmpty {
            checks.append(fail(VerificationCheck.tarStructure, "not checked to the end: the gzip stream is damaged"))
        } else if scan.tarProblems.isEmpty {
            checks.append(
                VerificationCheck(
                    name: VerificationCheck.tarStructure, passed: true,
                    detail: "\(scan.files.count) files in \(ArchiveScan.quote(scan.bagName ?? "")), end marker present"))
        } else {
            checks.append(fail(VerificationCheck.tarStructure, summarize(scan.tarProblems)))
        }
        return checks
    }

    private static func signedFileChecks(_ scan: ArchiveScan, _ manifest: ExportManifest?) -> [VerificationCheck] {
        guard let manifest else {
            return [
                fail(VerificationCheck.signedFiles, "not checked: no readable manifest"),
                fail(VerificationCheck.unlistedFiles, "not checked: no readable manifest"),
            ]
        }
        var problems: [String] = []
        for file in manifest.files {
            let quoted = ArchiveScan.quote(file.path)
            guard let member = scan.files[file.path] else {
                problems.append("\(quoted) missing from the archive")
                continue
            }
            if member.sha256 != file.sha256.lowercased() {
                problems.append("\(quoted) digest expected \(file.sha256) got \(member.sha256)")
            }
            if member.size != file.size { problems.append("\(quoted) size expected \(file.size) got \(member.size)") }
            if let problem = member.rowsProblem {
                problems.append("\(quoted) rows cannot be counted: \(problem)")
            } else if member.rows != file.rows {
                problems.append("\(quoted) rows expected \(file.rows.map(String.init) ?? "none") got \(member.rows.map(String.init) ?? "none")")
            }
        }
        let listed = Set(manifest.files.map(\.path))
        let unlisted = scan.files.keys.filter { !listed.contains($0) }.sorted()
        return [
            problems.isEmpty
                ? VerificationCheck(
                    name: VerificationCheck.signedFiles, passed: true,
                    detail: "\(manifest.files.count) files match digest, size and rows")
                : fail(VerificationCheck.signedFiles, summarize(problems)),
            unlisted.isEmpty
                ? VerificationCheck(name: VerificationCheck.unlistedFiles, passed: true, detail: "every archived file is signed")
                : fail(VerificationCheck.unlistedFiles, summarize(unlisted.map { "\(ArchiveScan.quote($0)) is not in the signed manifest" })),
        ]
    }

    private static func checkpointCheck(_ manifest: ExportManifest?, _ key: Ed25519PublicKey) -> VerificationCheck {
        let name = VerificationCheck.auditCheckpoint
        guard let checkpoint = manifest?.auditCheckpoint else { return fail(name, "not checked: no readable manifest") }
        guard let signature = Base64.decode(checkpoint.signature), key.isValidSignature(signature, for: checkpoint.signedBytes) else {
            return fail(name, "checkpoint seq \(checkpoint.seq) signature does not verify with \(key.fingerprint)")
        }
        return VerificationCheck(name: name, passed: true, detail: "seq \(checkpoint.seq) head \(checkpoint.headHash)")
    }

    /// The first few problems, and how many more.
    static func summarize(_ problems: [String]) -> String {
        let shown = problems.prefix(5).joined(separator: "; ")
        return problems.count > 5 ? shown + "; and \(problems.count - 5) more" : shown
    }
}
