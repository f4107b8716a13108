public import Foundation
public import CohortCrypto
import CohortCore

/// Verifies an export — archive, manifest, signature — with nothing but the study's public key.
///
/// Every check that can run does run (a failure stops nothing), and each is reported by name:
/// signature; signer key; manifest format; archive size and digest; gzip integrity and tar
/// structure (one streaming pass that also hashes every member and counts its rows, without
/// extracting); the bag (`bagit.txt`, `manifest-sha256.txt`, `tagmanifest-sha256.txt`,
/// `Payload-Oxum`); every file of the signed manifest (digest, size, rows) and no file outside
/// it; the audit checkpoint's signature. Extra checks, when given, run on a temporary
/// extraction of the bag that is removed afterwards.
public enum Verifier {
    /// Verifies the export at `archive`.
    ///
    /// - Parameters:
    ///   - manifest: defaults to `X.manifest.json` beside `X.tar.gz`.
    ///   - signature: defaults to `X.manifest.json.sig` beside `X.tar.gz`.
    ///   - publicKey: the study's signing key (public half).
    ///   - extraChecks: run on the extracted bag (e.g. residual-PII scan); extraction happens
    ///     only when this is not empty.
    public static func verify(
        archive: URL, manifest: URL? = nil, signature: URL? = nil, publicKey: Ed25519PublicKey,
        extraChecks: [ExtraVerificationCheck] = []
    ) -> VerificationReport {
        var checks: [VerificationCheck] = []
        let manifestURL = manifest ?? ManifestSigner.manifestURL(forArchive: archive)
        let signatureURL = signature ?? ManifestSigner.signatureURL(forArchive: archive)

        // Signature over the exact manifest bytes.
        let manifestBytes = try? [UInt8](Data(contentsOf: manifestURL))
        let signatureBytes = try? [UInt8](Data(contentsOf: signatureURL))
        checks.append(signatureCheck(manifestBytes, signatureBytes, publicKey, manifestURL, signatureURL))

        // The manifest itself.
        var parsed: ExportManifest?
        if let manifestBytes {
            if let value = try? JSONDecoder().decode(ExportManifest.self, from: Data(manifestBytes)) {
                if value.format == ExportManifest.currentFormat {
                    parsed = value
                    checks.append(VerificationCheck(name: VerificationCheck.manifestFormat, passed: true, detail: value.format))
                } else {
                    checks.append(fail(VerificationCheck.manifestFormat, "unknown format \(ArchiveScan.quote(value.format))"))
                }
            } else {
                checks.append(fail(VerificationCheck.manifestFormat, "manifest is not a valid export manifest"))
            }
        } else {
            checks.append(fail(VerificationCheck.manifestFormat, "manifest file missing: \(manifestURL.lastPathComponent)"))
        }
        if let parsed {
            let expected = publicKey.fingerprint
            let actual = parsed.signer.keyFingerprint
            checks.append(
                parsed.signer.algorithm == "Ed25519" && actual == expected
                    ? VerificationCheck(name: VerificationCheck.signerKey, passed: true, detail: "Ed25519 \(actual)")
                    : fail(VerificationCheck.signerKey, "manifest names \(parsed.signer.algorithm) \(actual), key is \(expected)"))
        } else {
            checks.append(fail(VerificationCheck.signerKey, "not checked: no readable manifest"))
        }

        // One pass over the archive.
        var extractionRoot: URL?
        if !extraChecks.isEmpty {
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-verify-" + UUID().uuidString)
            if (try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]))
                != nil
            {
                extractionRoot = root
            }
        }
        defer { if let extractionRoot { try? FileManager.default.removeItem(at: extractionRoot) } }
        let scan = ArchiveScan.run(archive: archive, extractTo: extractionRoot)

        checks += archiveChecks(scan, parsed)
        checks += BagChecks.run(scan)
        checks += signedFileChecks(scan, parsed)
        checks.append(checkpointCheck(parsed, publicKey))

        for extra in extraChecks {
            guard let bag = scan.extractedBag else {
                checks.append(fail(extra.name, "not run: the archive could not be extracted completely"))
                continue
            }
            do {
                checks.append(try extra.run(bag))
            } catch let error as CohortError {
                checks.append(fail(extra.name, error.message))
            } catch {
                checks.append(fail(extra.name, "check could not run"))
            }
        }
        return VerificationReport(archive: archive.path, checks: checks)
    }

    private static func fail(_ name: String, _ detail: String) -> VerificationCheck {
        VerificationCheck(name: name, passed: false, detail: detail)
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
