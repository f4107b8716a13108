public import Foundation
import COpenSSL
import CohortCore

/// An X.509 certificate an export is encrypted to (CMS recipient), checked before use.
///
/// Loading reads one PEM certificate; ``check(at:caFile:)`` refuses one that is expired, not yet
/// valid, whose key cannot encrypt (RSA without `keyEncipherment`, EC without `keyAgreement`,
/// or another key type), or — with a CA file — whose chain does not verify. A certificate with
/// no key-usage extension may be used for any purpose (RFC 5280 §4.2.1.3).
///
/// A value: it keeps the certificate's DER bytes and what was read from them, and makes an
/// OpenSSL `X509` only for the operation that needs one (``X509Certificate``), as the key
/// structs do with `EVPKey`.
public struct RecipientCertificate: Sendable {
    /// The kind of key the certificate carries, which decides the CMS recipient type.
    public enum KeyKind: String, Sendable {
        /// RSA: key transport with RSA-OAEP (SHA-256).
        case rsa
        /// EC: key agreement with ECDH (SHA-256 KDF, AES key wrap).
        case ec
    }

    /// The certificate, DER.
    let der: [UInt8]
    /// The key-usage bits, or nil when the certificate has no key-usage extension.
    let keyUsage: UInt32?
    /// The file it was read from (for messages).
    public let path: String
    /// SHA-256 of the DER certificate, lowercase hex.
    public let fingerprint: String
    /// The subject's common name, or the whole one-line subject when it has none.
    public let subjectName: String
    /// What the key is.
    public let keyKind: KeyKind?
    /// The validity window.
    public let notBefore: Date
    public let notAfter: Date

    /// Reads the first PEM certificate of `path`.
    public init(path: String) throws {
        self.path = path
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CohortError(
                .notFound, "recipient certificate not found", at: .init(file: path),
                hint: "give the recipient's X.509 certificate in PEM (\"-----BEGIN CERTIFICATE-----\")")
        }
        let bio = try MemoryBIO(contents: [UInt8](data))
        guard let certificate = PEM_read_bio_X509(bio.pointer, nil, nil, nil) else {
            _ = OpenSSL.drainErrors()
            throw CohortError(
                .invalidInput, "file is not a PEM certificate", at: .init(file: path),
                hint: "expected an X.509 certificate in PEM (\"-----BEGIN CERTIFICATE-----\"), e.g. from `openssl req -x509`")
        }
        defer { X509_free(certificate) }
        var encoded: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(certificate, &encoded)
        guard length > 0, let encoded else { throw OpenSSL.systemError("could not encode the certificate") }
        der = Array(UnsafeBufferPointer(start: encoded, count: Int(length)))
        CRYPTO_free(encoded, #file, #line)
        fingerprint = SHA256.hex(der)
        keyUsage = X509_get_extension_flags(certificate) & UInt32(EXFLAG_KUSAGE) != 0 ? X509_get_key_usage(certificate) : nil
        subjectName = Self.subject(of: certificate)
        switch EVP_PKEY_get_base_id(X509_get0_pubkey(certificate)) {
        case EVP_PKEY_RSA: keyKind = .rsa
        case EVP_PKEY_EC: keyKind = .ec
        default: keyKind = nil
        }
        notBefore = Self.date(X509_get0_notBefore(certificate))
        notAfter = Self.date(X509_get0_notAfter(certificate))
    }

    /// Refuses a certificate that cannot receive an export at `now` (`.security`, exit 6): expired,
    /// not yet valid, a key that is neither RSA nor EC, a key usage that excludes encryption, or
    /// (with `caFile`) a chain that does not verify.
    public func check(at now: Date, caFile: String? = nil) throws {
        let location = CohortError.Location(file: path)
        let day = ISO8601DateFormatter()
        if now > notAfter {
            throw CohortError(
                .security, "recipient certificate expired on \(day.string(from: notAfter))", at: location,
                hint: "ask the recipient for a current certificate")
        }
        if now < notBefore {
            throw CohortError(
                .security, "recipient certificate is not valid until \(day.string(from: notBefore))", at: location,
                hint: "check the machine's clock, or ask the recipient for a certificate valid now")
        }
        guard let keyKind else {
            throw CohortError(
                .security, "recipient certificate's key is neither RSA nor EC, so it cannot receive an encrypted export", at: location,
                hint: "ask the recipient for an RSA (2048 bits or more) or EC certificate for encryption")
        }
        if let usage = keyUsage {
            let needed = keyKind == .rsa ? UInt32(KU_KEY_ENCIPHERMENT) : UInt32(KU_KEY_AGREEMENT)
            if usage & needed == 0 {
                let name = keyKind == .rsa ? "keyEncipherment" : "keyAgreement"
                throw CohortError(
                    .security, "recipient certificate's key usage does not allow encryption (it lacks \(name))", at: location,
                    hint: "ask the recipient for their encryption certificate, not a signing one")
            }
        }
        if let caFile { try verifyChain(caFile: caFile, at: now) }
    }

    private func verifyChain(caFile: String, at now: Date) throws {
        guard let store = X509_STORE_new() else { throw OpenSSL.systemError("could not create a certificate store") }
        defer { X509_STORE_free(store) }
        guard X509_STORE_load_file(store, caFile) == 1 else {
            _ = OpenSSL.drainErrors()
            throw CohortError(
                .invalidInput, "CA file could not be read as PEM certificates", at: .init(file: caFile),
                hint: "give the certificate authority's certificate(s) in PEM")
        }
        guard let context = X509_STORE_CTX_new() else { throw OpenSSL.systemError("could not create a verification context") }
        defer { X509_STORE_CTX_free(context) }
        let certificate = try X509Certificate(self)
        guard X509_STORE_CTX_init(context, store, certificate.pointer, nil) == 1 else { throw OpenSSL.systemError("could not start chain verification") }
        X509_STORE_CTX_set_time(context, 0, time_t(now.timeIntervalSince1970))
        if X509_verify_cert(context) != 1 {
            let reason = String(cString: X509_verify_cert_error_string(Int(X509_STORE_CTX_get_error(context))))
            _ = OpenSSL.drainErrors()
            throw CohortError(
                .security, "recipient certificate does not verify against the CA file: \(reason)", at: .init(file: path),
                hint: "check that the certificate was issued by the CA in --ca")
        }
    }

    private static func subject(of certificate: OpaquePointer) -> String {
        guard let name = X509_get_subject_name(certificate) else { return "" }
        let index = X509_NAME_get_index_by_NID(name, NID_commonName, -1)
        if index >= 0, let entry = X509_NAME_get_entry(name, index), let data = X509_NAME_ENTRY_get_data(entry) {
            var utf8: UnsafeMutablePointer<UInt8>?
            let length = ASN1_STRING_to_UTF8(&utf8, data)
            if length > 0, let utf8 {
                defer { CRYPTO_free(utf8, #file, #line) }
                return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
            }
        }
        guard let line = X509_NAME_oneline(name, nil, 0) else { return "" }
        defer { CRYPTO_free(line, #file, #line) }
        return String(cString: line)
    }

    private static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date {
        var parts = tm()
        guard let time, ASN1_TIME_to_tm(time, &parts) == 1 else { return .distantPast }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }
}

/// An OpenSSL `X509` made from a ``RecipientCertificate``'s DER for one operation, freed with it.
final class X509Certificate {
    let pointer: OpaquePointer

    init(_ certificate: RecipientCertificate) throws {
        let parsed = certificate.der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var start = buffer.baseAddress
            return d2i_X509(nil, &start, buffer.count)
        }
        guard let parsed else { throw OpenSSL.systemError("could not read the certificate back") }
        pointer = parsed
    }

    deinit {
        X509_free(pointer)
    }
}
