import Foundation
import COpenSSL
import CohortCore

/// Encrypts a file to recipient certificates as CMS (RFC 5652), and decrypts one, through the
/// system OpenSSL — so a recipient opens it with stock tools:
/// `openssl cms -decrypt -in X.p7m -inform DER -inkey key.pem -recip cert.pem -out X`.
///
/// Content: AuthEnvelopedData with AES-256-GCM (RFC 5083/5084) by default, or EnvelopedData with
/// AES-256-CBC for recipients whose software predates it. Recipients: RSA keys by key transport
/// with RSA-OAEP (SHA-256), EC keys by ECDH key agreement (SHA-256 KDF, AES-256 key wrap). The
/// input is read and the output written in a stream (DER with indefinite lengths), so memory
/// does not grow with the file.
public enum CMSEnvelope {
    /// The content-encryption scheme.
    public enum ContentCipher: String, Sendable, Codable, CaseIterable {
        /// AuthEnvelopedData, AES-256-GCM: tampering fails decryption.
        case aes256GCM = "aes-256-gcm"
        /// EnvelopedData, AES-256-CBC: for recipients without AuthEnvelopedData support.
        case aes256CBC = "aes-256-cbc"
    }

    /// Encrypts the file at `input` to every certificate in `recipients`, writing DER CMS to `output`
    /// (created 0600; replaced if present).
    public static func encrypt(
        input: String, output: String, to recipients: [RecipientCertificate], cipher: ContentCipher = .aes256GCM
    ) throws {
        guard !recipients.isEmpty else { throw CohortError(.invalidInput, "no recipient certificate to encrypt to") }
        let evpCipher = cipher == .aes256GCM ? EVP_aes_256_gcm() : EVP_aes_256_cbc()
        let flags = UInt32(CMS_BINARY | CMS_PARTIAL | CMS_STREAM)
        guard let source = BIO_new_file(input, "rb") else {
            _ = OpenSSL.drainErrors()
            throw CohortError(.notFound, "file to encrypt could not be opened", at: .init(file: input))
        }
        defer { BIO_free(source) }
        guard let cms = CMS_encrypt(nil, source, evpCipher, flags) else {
            throw OpenSSL.systemError("could not start the CMS envelope")
        }
        defer { CMS_ContentInfo_free(cms) }
        for recipient in recipients {
            // The envelope takes its own reference to the certificate.
            let certificate = try X509Certificate(recipient)
            guard let info = CMS_add1_recipient_cert(cms, certificate.pointer, UInt32(CMS_KEY_PARAM)) else {
                throw CohortError(
                    .security, "recipient certificate cannot receive a CMS envelope", at: .init(file: recipient.path),
                    underlying: OpenSSL.drainErrors())
            }
            guard let keyContext = CMS_RecipientInfo_get0_pkey_ctx(info) else {
                throw OpenSSL.systemError("could not configure the recipient key")
            }
            switch recipient.keyKind {
            case .rsa:
                try OpenSSL.check(
                    EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_OAEP_PADDING) > 0 ? 1 : 0, "could not select RSA-OAEP")
                try OpenSSL.check(EVP_PKEY_CTX_set_rsa_oaep_md(keyContext, EVP_sha256()) > 0 ? 1 : 0, "could not select SHA-256 for OAEP")
            case .ec:
                try OpenSSL.check(EVP_PKEY_CTX_set_ecdh_kdf_md(keyContext, EVP_sha256()) > 0 ? 1 : 0, "could not select SHA-256 for ECDH")
            case nil:
                throw CohortError(.security, "recipient certificate's key is neither RSA nor EC", at: .init(file: recipient.path))
            }
        }
        let descriptor = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CohortError(.system, "could not create the encrypted file", at: .init(file: output), underlying: String(cString: strerror(errno)))
        }
        guard let sink = BIO_new_fd(descriptor, BIO_CLOSE) else {
            close(descriptor)
            throw OpenSSL.systemError("could not open the encrypted file for writing")
        }
        defer { BIO_free(sink) }
        guard i2d_CMS_bio_stream(sink, cms, source, Int32(flags)) == 1, BIO_ctrl(sink, BIO_CTRL_FLUSH, 0, nil) == 1 else {
            throw CohortError(.system, "could not write the encrypted file", at: .init(file: output), underlying: OpenSSL.drainErrors())
        }
        guard fsync(descriptor) == 0 else {
            throw CohortError(.system, "could not sync the encrypted file", at: .init(file: output), underlying: String(cString: strerror(errno)))
        }
    }

    /// Decrypts the DER CMS at `input` with `privateKeyPEM` (the recipient's key, PEM) and its
    /// certificate, writing the content to `output` (created 0600). Refuses (`.security`) when the
    /// key is not a recipient's or the content fails its integrity check.
    ///
    /// Streams: the envelope's structure (recipients, algorithm, tag) is parsed apart from its
    /// encrypted content, which is read from the file as it is decrypted (``CMSEnvelopeReader``),
    /// so memory does not grow with the file.
    public static func decrypt(input: String, output: String, privateKeyPEM: [UInt8], certificate: RecipientCertificate) throws {
        let keyBIO = try MemoryBIO(contents: privateKeyPEM)
        guard let key = PEM_read_bio_PrivateKey(keyBIO.pointer, nil, nil, nil) else {
            _ = OpenSSL.drainErrors()
            throw CohortError(.invalidInput, "decryption key is not a PEM private key", hint: "give the recipient's private key (PEM, unencrypted)")
        }
        defer { EVP_PKEY_free(key) }
        let x509 = try X509Certificate(certificate)
        guard X509_check_private_key(x509.pointer, key) == 1 else {
            _ = OpenSSL.drainErrors()
            throw CohortError(
                .security, "decryption key does not belong to the recipient certificate", at: .init(file: certificate.path),
                hint: "give the private key that matches --recipient-cert")
        }
        let input_ = open(input, O_RDONLY | O_CLOEXEC)
        guard input_ >= 0 else { throw CohortError(.notFound, "encrypted file could not be opened", at: .init(file: input)) }
        defer { close(input_) }
        var status = stat()
        guard fstat(input_, &status) == 0 else { throw CohortError(.system, "encrypted file could not be read", at: .init(file: input)) }
        // The envelope's structure is parsed on its own and its content streamed from the file, so
        // memory does not grow with the archive.
        let envelope: CMSEnvelopeReader
        do {
            envelope = try CMSEnvelopeReader(descriptor: input_, size: UInt64(status.st_size))
        } catch let error as CohortError {
            throw CohortError(error.code, error.message, at: .init(file: input), hint: error.hint)
        }
        let structure = try MemoryBIO(contents: envelope.structure)
        guard let cms = d2i_CMS_bio(structure.pointer, nil) else {
            _ = OpenSSL.drainErrors()
            throw CohortError(
                .integrity, "file is not a CMS (DER) envelope", at: .init(file: input), hint: "give the .p7m file cohort export wrote")
        }
        defer { CMS_ContentInfo_free(cms) }
        let content = try ContentSource(descriptor: input_, pieces: envelope.pieces)
        let descriptor = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CohortError(.system, "could not create the decrypted file", at: .init(file: output), underlying: String(cString: strerror(errno)))
        }
        guard let sink = BIO_new_fd(descriptor, BIO_CLOSE) else {
            close(descriptor)
            throw OpenSSL.systemError("could not open the decrypted file for writing")
        }
        defer { BIO_free(sink) }
        guard CMS_decrypt(cms, key, x509.pointer, content.bio, sink, UInt32(CMS_BINARY)) == 1, BIO_ctrl(sink, BIO_CTRL_FLUSH, 0, nil) == 1 else {
            let underlying = OpenSSL.drainErrors()
            unlink(output)
            throw CohortError(
                .security, "could not decrypt: not encrypted to this certificate, or the content was altered", at: .init(file: input),
                hint: "check --decrypt-key and --recipient-cert; a changed file fails its integrity check", underlying: underlying)
        }
    }
}
