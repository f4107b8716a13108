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
        let key = try publicKeyFile.map(StudyPublicKey.load) ?? workspace().keystore.publicKey
        let receipt: WithdrawalReceipt
        do {
            receipt = try ReceiptDocument.verify(String(decoding: data, as: UTF8.self), publicKey: key)
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
            if receipt.mode != .erase {
                let named = try ws.store.participant(code: receipt.participantCode)?.participant.id.uuidString.lowercased()
                guard named == event.subject else {
                    return Outcome(
                        authentic: false,
                        message: "receipt \(id) names \(receipt.participantCode), but event \(event.seq) of the trail is another participant's withdrawal")
                }
            }
            trail = "event \(event.seq) of the audit trail issued it"
        }
        return Outcome(
            authentic: true,
            message: "receipt \(id) is authentic: \(receipt.participantCode) withdrew (\(receipt.mode.rawValue)) at \(receipt.withdrawnAt.iso8601), signed by \(key.fingerprint); \(trail)")
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
