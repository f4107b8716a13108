import CohortCore
public import CohortCrypto
import CohortDeid
public import CohortPackage
import CohortStore
public import Foundation
import CohortIO

/// `cohort verify`: the package verifier, plus (with a workspace) the residual-PII scan against
/// the roster, the check that the manifest's audit checkpoint is in the workspace's chain, and the
/// check that an `export.create` event of the trail names the archive's SHA-256 (and no
/// `export.abandoned` closed that export): an export the trail does not name fails.
public enum VerifyService {
    /// Verifies `archive` against its signed manifest (`manifest`, or the one next to the archive) and
    /// `publicKey`; with a workspace, also the residual scan, the audit checkpoint and the `export.create`
    /// event. Failed checks are in the report (`passed` false); throws only when the archive or manifest
    /// cannot be read at all. `progress` sees the archive's bytes read so far and its size.
    public static func verify(
        archive: URL, manifest: URL?, publicKey: Ed25519PublicKey, workspace: Workspace?,
        progress: (@Sendable (_ bytesRead: UInt64, _ totalBytes: UInt64) -> Void)? = nil
    ) throws -> VerificationReport {
        try verify(archive: archive, manifest: manifest, publicKey: publicKey, workspace: workspace, readers: [], progress: progress)
    }

    /// ``verify(archive:manifest:publicKey:workspace:progress:)``, with `readers` run on the bag
    /// the same pass extracts (each gets the files it ``ExtraVerificationCheck/reads``, as a check
    /// does) and left out of the report: how `cohort report` reads the de-identification report
    /// without inflating the archive a second time.
    package static func verify(
        archive: URL, manifest: URL?, publicKey: Ed25519PublicKey, workspace: Workspace?, readers: [ExtraVerificationCheck],
        progress: (@Sendable (_ bytesRead: UInt64, _ totalBytes: UInt64) -> Void)?
    ) throws -> VerificationReport {
        let manifestURL = manifest ?? ManifestSigner.manifestURL(forArchive: archive)
        // The reviewed exceptions the signed manifest records (printed whether or not a workspace is given).
        let reviewed = reviewedExceptions(manifestURL)
        var extra = [reviewedExceptionsCheck(reviewed)]
        // Consent, recomputed from the published tables and the manifest's consent facts. The
        // manifest is read again here; its signature is checked by the verifier, which fails the
        // report if these bytes are not the signed ones.
        let consentManifest = (try? Data(contentsOf: manifestURL)).flatMap { try? JSONDecoder().decode(ExportManifest.self, from: $0) }
        extra.append(
            ExtraVerificationCheck(name: ConsentCheck.name, reads: ConsentCheck.reads(consentManifest)) { bag in
                ConsentCheck.run(bag: bag, manifest: consentManifest)
            })
        if workspace == nil, let manifest = consentManifest, let scan = manifest.residualScan {
            extra.append(statedScanCheck(manifest, scan))
        }
        extra.append(ExtraVerificationCheck(name: signerCheckName, reads: .nothing) { _ in try signerCheck(manifest: consentManifest, workspace: workspace) })
        if let workspace {
            extra.append(residualScanCheck(workspace, reviewed: reviewed, recorded: consentManifest?.residualScan.map(Self.describe)))
            extra.append(auditCheckpointCheck(workspace, manifestURL: manifestURL))
            // Both trail checks look the archive up by its SHA-256, computed from the file once.
            let digest = ArchiveDigest(archive)
            extra.append(
                ExtraVerificationCheck(name: "export named in audit trail", reads: .nothing) { _ in
                    try auditTrailCheck(archiveSHA256: try digest.value(), workspace: workspace)
                })
            extra.append(ExtraVerificationCheck(name: "deliveries", reads: .nothing) { _ in try deliveriesCheck(archiveSHA256: try digest.value(), workspace: workspace) })
            extra.append(
                ExtraVerificationCheck(name: policyCheckName, reads: .nothing) { _ in
                    try policyCheck(manifest: consentManifest, workspace: workspace)
                })
        }
        // With an explicit manifest, its signature is `<manifest>.sig` beside it.
        let signature = manifest.map { URL(fileURLWithPath: $0.path + ".sig") }
        let report = Verifier.verify(
            archive: archive, manifest: manifest, signature: signature, publicKey: publicKey, extraChecks: extra + readers, progress: progress)
        guard !readers.isEmpty else { return report }
        // The verifier ends its report with one line per extra check, in order: the readers' are
        // the last ones, theirs and not the verification's.
        let ours = report.checks.prefix(report.checks.count - min(readers.count, report.checks.count))
        return VerificationReport(archive: report.archive, checks: Array(ours))
    }

    /// The reviewed exceptions the signed manifest records, shown as a check that always passes.
    private static func reviewedExceptionsCheck(_ reviewed: [(exception: ResidualException, findings: Int)]) -> ExtraVerificationCheck {
        ExtraVerificationCheck(name: "reviewed exceptions", reads: .nothing) { _ in
            VerificationCheck(
                name: "reviewed exceptions", passed: true,
                detail: reviewed.isEmpty
                    ? "none"
                    : "\(reviewed.count): "
                        + reviewed.map { "\($0.exception.table).\($0.exception.column) sha256 \($0.exception.valueSHA256) (\($0.findings) finding(s)) approved by \($0.exception.reviewer): \($0.exception.reason)" }
                        .joined(separator: "; "))
        }
    }

    /// Without the roster the scan cannot be re-run: the manifest's statement is shown, and it
    /// must be consistent (findings at export only with reviewed exceptions recorded).
    private static func statedScanCheck(_ manifest: ExportManifest, _ scan: ExportManifest.ResidualScan) -> ExtraVerificationCheck {
        let findings = scan.rules.reduce(0) { $0 + $1.findings }
        let consistent = findings == 0 || !(manifest.residualExceptions ?? []).isEmpty
        return ExtraVerificationCheck(name: "residual PII scan at export", reads: .nothing) { _ in
            VerificationCheck(
                name: "residual PII scan at export", passed: consistent,
                detail: (consistent ? "" : "findings recorded without reviewed exceptions: ") + Self.describe(scan)
                    + " (re-run it against the roster with --workspace)")
        }
    }

    /// The residual-PII scan of the extracted bag against the workspace's roster; findings the
    /// manifest's reviewed exceptions cover do not fail it.
    private static func residualScanCheck(
        _ workspace: Workspace, reviewed: [(exception: ResidualException, findings: Int)], recorded recordedScan: String?
    ) -> ExtraVerificationCheck {
        let exceptions = ResidualExceptionList(reviewed.map(\.exception))
        // Every file: the scan covers every file of the bag.
        return ExtraVerificationCheck(name: "residual PII scan", reads: .everything) { bag in
            let scanner = try workspace.residualScanner()
            let result = try scanner.scan(directory: bag)
            let open = result.findings.filter { exceptions.exception(covering: $0) == nil }
            let covered = result.findings.count - open.count
            var note = covered == 0 ? "" : "; \(covered) finding(s) covered by the manifest's reviewed exceptions"
            if let recordedScan { note += "; at export: " + recordedScan }
            let checked = "\(result.filesScanned) files; \(result.ruleCountsSummary)"
            return VerificationCheck(
                name: "residual PII scan", passed: open.isEmpty,
                detail: open.isEmpty
                    ? "no unreviewed identifier of the \(scanner.participants) roster participants (\(checked))" + note
                    : "\(open.count) finding(s): " + open.prefix(5).map(\.description).joined(separator: "; ") + " (\(checked))" + note)
        }
    }

    /// Whether the manifest's audit checkpoint is an event of the workspace's intact chain.
    private static func auditCheckpointCheck(_ workspace: Workspace, manifestURL: URL) -> ExtraVerificationCheck {
        ExtraVerificationCheck(name: "audit checkpoint in chain", reads: .nothing) { _ in
            guard let data = FileManager.default.contents(atPath: manifestURL.path),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let cp = object["audit_checkpoint"] as? [String: Any], let seq = (cp["seq"] as? NSNumber)?.int64Value,
                let head = cp["head_hash"] as? String
            else { return VerificationCheck(name: "audit checkpoint in chain", passed: false, detail: "the manifest has no readable audit checkpoint") }
            let chain = try workspace.store.verifyAudit(
                signers: workspace.signingKeys().checkpointSigners(fallback: workspace.keystore.publicKey))
            let event = try workspace.store.auditEvents(since: seq, limit: 1).first
            let ok = chain.isIntact && event?.seq == seq && event?.hash == head
            return VerificationCheck(
                name: "audit checkpoint in chain", passed: ok,
                detail: ok ? "event \(seq) of the workspace's intact chain has head \(head.prefix(16))…"
                    : (chain.firstProblem ?? "event \(seq) of the workspace's chain does not have the manifest's head hash"))
        }
    }

    /// `12 files; roster forms: 9800 values, 0 findings; unknown tokens: 3400 free-text values, 0 findings`.
    static func describe(_ scan: ExportManifest.ResidualScan) -> String {
        let rules = scan.rules.map { rule -> String in
            let values = "\(rule.valuesChecked) \(rule.rule == "unknown tokens" ? "free-text " : "")value\(rule.valuesChecked == 1 ? "" : "s")"
            return "\(rule.rule): \(values), \(rule.findings) finding\(rule.findings == 1 ? "" : "s")"
        }
        return "\(scan.filesScanned) files; " + rules.joined(separator: "; ")
    }

    /// The archive's SHA-256 (computed from the file, not taken from the manifest) must be named
    /// by an `export.create` of the workspace's trail, and that export must not have been abandoned.
    static func auditTrailCheck(archiveSHA256 sha256: String, workspace: Workspace) throws -> VerificationCheck {
        let name = "export named in audit trail"
        guard let create = try workspace.store.exportCreateEvents(archiveSHA256: sha256).last else {
            return VerificationCheck(
                name: name, passed: false,
                detail: "no export.create event of the workspace's audit trail names this archive's SHA-256 \(sha256.prefix(16))… — it was not exported from this workspace, or its export was never recorded")
        }
        if let exportID = create.details["export_id"],
            let abandoned = try workspace.store.exportEvents(exportID: exportID).first(where: { $0.action == "export.abandoned" })
        {
            return VerificationCheck(
                name: name, passed: false, detail: "event \(create.seq) names this archive, but event \(abandoned.seq) records its export as abandoned")
        }
        return VerificationCheck(name: name, passed: true, detail: "event \(create.seq) (export.create) names this archive's SHA-256 \(sha256.prefix(16))…")
    }

    /// Where the trail says this archive (by its SHA-256) was delivered: informational, it passes
    /// whether or not there were deliveries.
    static func deliveriesCheck(archiveSHA256: String, workspace: Workspace) throws -> VerificationCheck {
        let events = try DeliveryService.deliveries(archiveSHA256: archiveSHA256, workspace: workspace)
        let detail = events.isEmpty
            ? "none recorded in the audit trail"
            : "\(events.count): " + events.map { event in
                let d = event.details
                return "event \(event.seq) \(d["host"] ?? "?"):\(d["path"] ?? "?") (port \(d["port"] ?? "?"), host key \(d["host_key"] ?? "?")) at \(event.at)"
            }.joined(separator: "; ")
        return VerificationCheck(name: "deliveries", passed: true, detail: detail)
    }

    static let signerCheckName = "signer allowed"

    /// The manifest's signer may sign this export: a site's key signs its own site's export
    /// only (the manifest's `site`), the owner's and study-wide keys any. With a workspace the
    /// key's scope comes from its registration in the trail (an unregistered key fails); without
    /// one, only the manifest's own claim (`signer.site`) can be compared, and the check says so.
    static func signerCheck(manifest: ExportManifest?, workspace: Workspace?) throws -> VerificationCheck {
        guard let manifest else { return VerificationCheck(name: signerCheckName, passed: false, detail: "the manifest could not be read") }
        let fingerprint = manifest.signer.keyFingerprint
        let exportScope = manifest.site.map { "site \($0)'s export" } ?? "a study-wide export"
        guard let workspace else {
            let claimed = manifest.signer.site
            let passed = claimed == nil || claimed == manifest.site
            return VerificationCheck(
                name: signerCheckName, passed: passed,
                detail: (passed ? "" : "a key of site \(claimed ?? "") signed \(exportScope): ")
                    + "the manifest names \(claimed.map { "site \($0)'s key" } ?? "an owner's or study-wide key") \(fingerprint.prefix(23))…; "
                    + "its registration in the audit trail was not checked (give -w WORKSPACE)")
        }
        guard let entry = try workspace.signingKeys().entry(fingerprint: fingerprint) else {
            return VerificationCheck(
                name: signerCheckName, passed: false,
                detail: "the signer \(fingerprint.prefix(23))… is no key the workspace's audit trail registered")
        }
        guard entry.scope.allows(site: manifest.site), manifest.signer.site == entry.scope.site else {
            return VerificationCheck(
                name: signerCheckName, passed: false,
                detail: "the signer is \(entry.scope)'s key (event \(entry.seq)), which may not sign \(exportScope)"
                    + (manifest.signer.site != entry.scope.site ? " (the manifest claims \(manifest.signer.site.map { "site \($0)" } ?? "no site"))" : ""))
        }
        // A revoked key counts only for exports whose checkpoint is before its revocation.
        if let problem = entry.revocationProblem(signedAt: manifest.auditCheckpoint.seq) {
            return VerificationCheck(
                name: signerCheckName, passed: false,
                detail: "\(exportScope) at audit event \(manifest.auditCheckpoint.seq) is \(problem): the key signs nothing from then on")
        }
        let revoked = entry.revokedAt.map { " before its revocation at event \($0)" } ?? ""
        return VerificationCheck(
            name: signerCheckName, passed: true, detail: "\(entry.scope)'s key (registered at event \(entry.seq)) signed \(exportScope)\(revoked)")
    }

    static let policyCheckName = "policy of the pinned protocol"

    /// The manifest's `policy_sha256` recomputed from the protocol revision the manifest names,
    /// as the workspace's store holds it (re-hashed against its pin on the read): an export made
    /// under any other policy — a protocol changed in the database, a manifest re-signed with a
    /// shared key — fails, whatever its signature says.
    static func policyCheck(manifest: ExportManifest?, workspace: Workspace) throws -> VerificationCheck {
        guard let manifest else { return VerificationCheck(name: policyCheckName, passed: false, detail: "the manifest could not be read") }
        let pinned = manifest.protocolReference.sha256
        guard let revision = try workspace.store.protocolRevision(sha256: pinned) else {
            return VerificationCheck(
                name: policyCheckName, passed: false, detail: "the manifest's protocol \(pinned.prefix(16))… is not pinned in this workspace's study database")
        }
        let recomputed = try DeidentificationReport.policySHA256(revision.studyProtocol.deidentification)
        let passed = recomputed == manifest.policySHA256
        return VerificationCheck(
            name: policyCheckName, passed: passed,
            detail: passed
                ? "policy \(recomputed.prefix(16))… recomputed from pinned revision \(revision.studyProtocol.revision)"
                : "the manifest's policy \(manifest.policySHA256.prefix(16))… is not the policy of pinned revision \(revision.studyProtocol.revision) (\(recomputed.prefix(16))…)")
    }

    /// The `residual_exceptions` of the manifest at `url` (none when absent or unreadable; the
    /// manifest's signature and digests are checked by the verifier itself).
    static func reviewedExceptions(_ url: URL) -> [(exception: ResidualException, findings: Int)] {
        guard let data = FileManager.default.contents(atPath: url.path),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let list = object["residual_exceptions"] as? [[String: Any]]
        else { return [] }
        return list.map { e in
            func text(_ key: String) -> String { e[key] as? String ?? "" }
            return (
                ResidualException(
                    table: text("table"), column: text("column"), valueSHA256: text("value_sha256"), reviewer: text("reviewer"), reason: text("reason")),
                (e["findings"] as? NSNumber)?.intValue ?? 0
            )
        }
    }
}

/// An archive's SHA-256, read from the file the first time it is asked for.
private final class ArchiveDigest {
    private let archive: URL
    private var computed: String?

    init(_ archive: URL) { self.archive = archive }

    func value() throws -> String {
        if let computed { return computed }
        let digest = try SHA256Hasher.digest(ofFile: archive.path).sha256
        computed = digest
        return digest
    }
}
