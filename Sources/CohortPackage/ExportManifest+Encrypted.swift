public import Foundation
public import CohortCrypto

extension ExportManifest {
    /// The CMS file (`X.tar.gz.p7m`) the archive was encrypted to its recipients as. The
    /// manifest's `archive` block keeps describing the plaintext archive — what verify checks
    /// after decrypting.
    public struct Encrypted: Sendable, Hashable, Codable {
        /// File name (no directory), `X.tar.gz.p7m`.
        public var fileName: String
        /// Lowercase hex SHA-256 of the `.p7m` file.
        public var sha256: String
        /// Its size in bytes.
        public var size: UInt64
        /// The content cipher (`aes-256-gcm` in AuthEnvelopedData, or `aes-256-cbc` in EnvelopedData).
        public var cipher: String
        /// Each recipient certificate, by the SHA-256 of its DER encoding (lowercase hex).
        public var recipients: [Recipient]

        /// One recipient certificate.
        public struct Recipient: Sendable, Hashable, Codable {
            /// Lowercase hex SHA-256 of the DER certificate.
            public var certificateSHA256: String
            /// The certificate's subject (common name).
            public var subject: String

            public init(certificateSHA256: String, subject: String) {
                self.certificateSHA256 = certificateSHA256
                self.subject = subject
            }

            enum CodingKeys: String, CodingKey {
                case subject
                case certificateSHA256 = "certificate_sha256"
            }
        }

        public init(fileName: String, sha256: String, size: UInt64, cipher: String, recipients: [Recipient]) {
            self.fileName = fileName
            self.sha256 = sha256
            self.size = size
            self.cipher = cipher
            self.recipients = recipients
        }

        enum CodingKeys: String, CodingKey {
            case sha256, size, cipher, recipients
            case fileName = "file_name"
        }
    }
}

/// What `cohort export --encrypt-to` asks of the packager: the checked recipient certificates,
/// the content cipher, and whether the plaintext archive is kept beside the `.p7m`.
public struct ExportEncryption: Sendable {
    public var recipients: [RecipientCertificate]
    public var cipher: CMSEnvelope.ContentCipher
    public var keepPlaintext: Bool

    public init(recipients: [RecipientCertificate], cipher: CMSEnvelope.ContentCipher = .aes256GCM, keepPlaintext: Bool = false) {
        self.recipients = recipients
        self.cipher = cipher
        self.keepPlaintext = keepPlaintext
    }

    /// `X.tar.gz.p7m` beside `X.tar.gz`.
    public static func encryptedURL(forArchive archiveURL: URL) -> URL {
        archiveURL.deletingLastPathComponent().appendingPathComponent(archiveURL.lastPathComponent + ".p7m")
    }
}
