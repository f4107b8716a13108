import CohortCore
import CohortPackage
public import Foundation
import CohortCrypto
import CohortStore

extension Workspace {
    /// What ``checkExportCheckpoints(_:)`` found for one manifest.
    public struct ExportCheckpointCheck: Sendable {
        /// The manifest file.
        public var manifest: String
        /// The audit event the manifest's signed checkpoint names.
        public var seq: Int64?
        /// Nil when the database still holds the trail the export was signed under; else why not.
        public var problem: String?
    }

    /// Compares the audit trail with the checkpoint each export manifest carries: the manifest's
    /// signature (`<manifest>.sig`) must verify with the study key (or the key the trail registers for the site that signed it, not
    /// revoked before the checkpoint's event), and the database must still
    /// hold the event the checkpoint names with the same hash. An export made after the newest
    /// `audit.head` therefore also catches a trail cut back behind it (issue: "the checkpoint in
    /// the newest export").
    public func checkExportCheckpoints(_ manifests: [URL]) -> [ExportCheckpointCheck] {
        // A site's export is signed by its own key, which the trail registers.
        let registry = try? signingKeys()
        return manifests.map { url in
            var check = ExportCheckpointCheck(manifest: url.path)
            guard let bytes = try? Data(contentsOf: url), bytes.count <= 16 << 20,
                let manifest = try? JSONDecoder().decode(ExportManifest.self, from: bytes)
            else {
                check.problem = "not a readable cohort export manifest"
                return check
            }
            check.seq = manifest.auditCheckpoint.seq
            let signatureURL = URL(fileURLWithPath: url.path + ".sig")
            guard let signature = try? Data(contentsOf: signatureURL), signature.count <= 1024,
                (registry?.entry(fingerprint: manifest.signer.keyFingerprint)?.key ?? keystore.publicKey).isValidSignature(Array(signature), for: Array(bytes))
            else {
                check.problem = "the manifest's signature (\(signatureURL.lastPathComponent)) is missing or does not verify with this study's key"
                return check
            }
            let checkpoint = manifest.auditCheckpoint
            // A revoked site key counts only for exports whose checkpoint is before its revocation.
            if let problem = registry?.entry(fingerprint: manifest.signer.keyFingerprint)?.revocationProblem(signedAt: checkpoint.seq) {
                check.problem = "the export at audit event \(checkpoint.seq) is \(problem)"
                return check
            }
            do {
                guard let hash = try store.auditEventHash(seq: checkpoint.seq) else {
                    let last = (try? store.auditHead()?.seq) ?? nil
                    check.problem =
                        "the export was signed at event \(checkpoint.seq) but the database ends at event \(last ?? 0): events were removed"
                    return check
                }
                if hash != checkpoint.headHash {
                    check.problem = "event \(checkpoint.seq) differs from the one the export was signed under: the trail was rewritten or study.db replaced"
                }
            } catch {
                check.problem = "the audit trail cannot be read: \(error)"
            }
            return check
        }
    }
}
