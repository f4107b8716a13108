import CohortCrypto
public import Foundation

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
    public static func verify(file: URL, publicKeyFile: URL?, workspace: () throws -> Workspace) throws -> Outcome {
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw CohortError(.notFound, "cannot read the receipt", at: .init(file: file.path))
        }
        let key = try publicKeyFile.map(StudyPublicKey.load) ?? workspace().keystore.publicKey
        do {
            let receipt = try ReceiptDocument.verify(String(decoding: data, as: UTF8.self), publicKey: key)
            return Outcome(
                authentic: true,
                message: "receipt \(receipt.receiptID.uuidString.lowercased()) is authentic: \(receipt.participantCode) withdrew (\(receipt.mode.rawValue)) at \(receipt.withdrawnAt.iso8601), signed by \(key.fingerprint)")
        } catch let error as CohortError {
            return Outcome(authentic: false, message: error.message)
        }
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
