import CohortCompliance
import CohortCrypto
public import Foundation
import CohortCore
import CohortStore

/// `cohort receipt verify`: checks a withdrawal receipt's Ed25519 signature.
public enum ReceiptCheck {
    /// What a receipt check found.
    public struct Outcome: Sendable {
        /// Whether the signature is the study's and the text unchanged.
        public var authentic: Bool
        /// One line for the coordinator: who withdrew, how and when (authentic), or what is wrong.
        public var message: String
    }

    /// Verifies the receipt in `file` with the public key in `publicKeyFile`, or, when nil, the
    /// key of the workspace `workspace()` opens. A missing receipt or key file is a not-found error.
    ///
    /// With `crossCheck` (a workspace: `receipt verify -w`), a signature is not enough: the
    /// workspace's trail must hold the `participant.withdraw` event that issued this receipt id,
    /// in the same mode, for the participant the receipt names (its internal id; an erased
    /// participant's code is gone, so only id and mode are compared). A receipt edited and
    /// re-signed with a key another site shares — one site's receipt turned into one for another
    /// site's participant — fails here.
    public static func verify(file: URL, publicKeyFile: URL?, crossCheck: Workspace? = nil, workspace: () throws -> Workspace) throws -> Outcome {
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw CohortError(.notFound, "cannot read the receipt", at: .init(file: file.path))
        }
        let text = String(decoding: data, as: UTF8.self)
        let claims = ReceiptDocument.signerClaims(text)
        let key: Ed25519PublicKey
        if let publicKeyFile {
            key = try StudyPublicKey.load(publicKeyFile)
        } else {
            // The key the trail registers under the fingerprint the receipt names, else this workspace's own.
            let ws = try crossCheck ?? workspace()
            key = try claims.keyFingerprint.flatMap { try ws.signingKeys().entry(fingerprint: $0)?.key } ?? ws.keystore.publicKey
        }
        let receipt: WithdrawalReceipt
        do {
            receipt = try ReceiptDocument.verify(text, publicKey: key)
        } catch let error as CohortError {
            return Outcome(authentic: false, message: error.message)
        }
        let id = receipt.receiptID.uuidString.lowercased()
        var trail = "the audit trail was not checked (give -w WORKSPACE)"
        if let ws = crossCheck {
            let issued = try ws.store.auditEvents().filter { $0.action == "participant.withdraw" && $0.details["receipt_id"] == id }
            guard let event = issued.last else {
                return Outcome(authentic: false, message: "receipt \(id) is signed, but no participant.withdraw event of the workspace's audit trail issued it")
            }
            guard event.details["mode"] == receipt.mode.rawValue else {
                return Outcome(
                    authentic: false,
                    message: "receipt \(id) says \(receipt.mode.rawValue), but event \(event.seq) of the trail recorded \(event.details["mode"] ?? "another mode")")
            }
            if let problem = try signerProblem(key: key, claimedSite: claims.site, participantID: event.subject, withdrawalSeq: event.seq, workspace: ws) {
                return Outcome(authentic: false, message: "receipt \(id) is signed, but \(problem)")
            }
            if receipt.mode != .erase {
                guard let named = try ws.store.participant(code: receipt.participantCode)?.participant.id.uuidString.lowercased() else {
                    // Row-level security hides other sites' participants from a site's role.
                    return Outcome(
                        authentic: false,
                        message: "receipt \(id) names \(receipt.participantCode), whom this workspace's database role cannot see: check it from the owner's or that participant's site's workspace")
                }
                guard named == event.subject else {
                    return Outcome(
                        authentic: false,
                        message: "receipt \(id) names \(receipt.participantCode), but event \(event.seq) of the trail is another participant's withdrawal")
                }
            }
            trail = "event \(event.seq) of the audit trail issued it"
        } else if let site = claims.site {
            trail += "; it names site \(site)'s key, whose registration was not checked"
        }
        return Outcome(
            authentic: true,
            message: "receipt \(id) is authentic: \(receipt.participantCode) withdrew (\(receipt.mode.rawValue)) at \(receipt.withdrawnAt.iso8601), signed by \(key.fingerprint); \(trail)")
    }
}

extension ReceiptCheck {
    /// Why the key that signed a receipt may not sign it, or nil: it must be registered in the
    /// trail, and a site's key signs receipts of its own site's participants only (the site of
    /// the participant's `participant.enroll` event), saying so in its signed `Signed for site:` line;
    /// a revoked key only for a withdrawal (`withdrawalSeq`) recorded before its revocation.
    static func signerProblem(
        key: Ed25519PublicKey, claimedSite: String?, participantID: String?, withdrawalSeq: Int64, workspace: Workspace
    ) throws -> String? {
        guard let entry = try workspace.signingKeys().entry(fingerprint: key.fingerprint) else {
            return "by \(key.fingerprint), a key the audit trail does not register"
        }
        // A revoked key counts only for withdrawals recorded before its revocation.
        if let problem = entry.revocationProblem(signedAt: withdrawalSeq) {
            return "it is \(problem), and the withdrawal is event \(withdrawalSeq)"
        }
        let site = try workspace.store.auditEvents(action: "participant.enroll").last { $0.subject == participantID }?.details["site"]
        guard entry.scope.allows(site: site) else {
            return "by \(entry.scope)'s key, and the participant is \(site.map { "site \($0)'s" } ?? "not of that site")"
        }
        guard claimedSite == entry.scope.site else {
            return "it names \(claimedSite.map { "site \($0)" } ?? "no site") as its signer, and the key is \(entry.scope)'s"
        }
        return nil
    }
}

/// Reads the study's Ed25519 public key from a PEM file (`--public-key`).
enum StudyPublicKey {
    static func load(_ url: URL) throws -> Ed25519PublicKey {
        guard let pem = FileManager.default.contents(atPath: url.path) else {
            throw CohortError(.notFound, "cannot read the public key", at: .init(file: url.path), hint: "give the study's signing.pub.pem (in the workspace's keys/ folder)")
        }
        return try Ed25519PublicKey(pemRepresentation: String(decoding: pem, as: UTF8.self))
    }
}
