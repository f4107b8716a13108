import CohortCore
public import CohortCrypto
import CohortDeid
public import CohortPackage
import CohortStore
public import Foundation

/// `cohort verify`: the package verifier, plus (with a workspace) the residual-PII scan against
/// the roster and the check that the manifest's audit checkpoint is in the workspace's chain.
public enum VerifyService {
    public static func verify(archive: URL, manifest: URL?, publicKey: Ed25519PublicKey, workspace: Workspace?) throws -> VerificationReport {
        var extra: [ExtraVerificationCheck] = []
        if let workspace {
            let roster = try workspace.store.participants(withIdentities: true).map(\.participant)
            extra.append(
                ExtraVerificationCheck(name: "residual PII scan") { bag in
                    let result = try ResidualScanner(roster: roster).scan(directory: bag)
                    return VerificationCheck(
                        name: "residual PII scan", passed: result.findings.isEmpty,
                        detail: result.findings.isEmpty
                            ? "\(result.filesScanned) files, no identifier of the \(roster.count) roster participants"
                            : "\(result.findings.count) finding(s): " + result.findings.prefix(5).map(\.description).joined(separator: "; "))
                })
            let manifestURL = manifest ?? ManifestSigner.manifestURL(forArchive: archive)
            extra.append(
                ExtraVerificationCheck(name: "audit checkpoint in chain") { _ in
                    guard let data = FileManager.default.contents(atPath: manifestURL.path),
                        let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                        let cp = object["audit_checkpoint"] as? [String: Any], let seq = (cp["seq"] as? NSNumber)?.int64Value,
                        let head = cp["head_hash"] as? String
                    else { return VerificationCheck(name: "audit checkpoint in chain", passed: false, detail: "the manifest has no readable audit checkpoint") }
                    let chain = try workspace.store.verifyAudit(publicKey: workspace.keystore.publicKey)
                    let event = try workspace.store.auditEvents(since: seq, limit: 1).first
                    let ok = chain.isIntact && event?.seq == seq && event?.hash == head
                    return VerificationCheck(
                        name: "audit checkpoint in chain", passed: ok,
                        detail: ok ? "event \(seq) of the workspace's intact chain has head \(head.prefix(16))…"
                            : (chain.firstProblem ?? "event \(seq) of the workspace's chain does not have the manifest's head hash"))
                })
        }
        // With an explicit manifest, its signature is `<manifest>.sig` beside it.
        let signature = manifest.map { URL(fileURLWithPath: $0.path + ".sig") }
        return Verifier.verify(archive: archive, manifest: manifest, signature: signature, publicKey: publicKey, extraChecks: extra)
    }
}
