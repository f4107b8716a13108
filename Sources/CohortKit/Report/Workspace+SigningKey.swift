import CohortCrypto
import Foundation

extension Workspace {
    /// The study's public signing key in this workspace (`keys/signing.pub.pem`): what an auditor
    /// verifies archives with.
    public var signingPublicKeyPath: String {
        Self.keysDirectory(of: directory).appendingPathComponent(Keystore.publicKeyFileName).path
    }
}
