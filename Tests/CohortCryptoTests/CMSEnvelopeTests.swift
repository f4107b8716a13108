import CohortCore
import Foundation
import Testing
@testable import CohortCrypto

/// CMS encryption and the streaming decryption against the `openssl cms` command in both
/// directions: what cohort writes, stock OpenSSL opens; what stock OpenSSL writes (streamed with
/// indefinite lengths, or DER with definite ones), cohort's streaming reader opens.
struct CMSEnvelopeTests {
    static func certificate(_ folder: URL, _ name: String, kind: String) throws -> (cert: String, key: String) {
        let cert = folder.appendingPathComponent("\(name).pem").path, key = folder.appendingPathComponent("\(name)-key.pem").path
        let keyOptions = kind == "rsa" ? ["-newkey", "rsa:2048"] : ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
        let usage = kind == "rsa" ? "keyUsage=keyEncipherment" : "keyUsage=keyAgreement"
        let r = try runTool("/usr/bin/openssl", ["req", "-x509"] + keyOptions + ["-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=\(name)", "-addext", usage])
        try #require(r.status == 0, "\(r.errorText)")
        return (cert, key)
    }

    /// A file of `size` pseudo-random bytes (not compressible, several OpenSSL stream chunks).
    static func payload(_ folder: URL, size: Int) throws -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let path = folder.appendingPathComponent("payload.bin").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(arguments: [("rsa", CMSEnvelope.ContentCipher.aes256GCM), ("ec", .aes256GCM), ("rsa", .aes256CBC), ("ec", .aes256CBC)])
    func cohortEncryptsStockOpenSSLAndCohortDecrypt(kind: String, cipher: CMSEnvelope.ContentCipher) throws {
        try withTemporaryDirectory { folder in
            let pair = try Self.certificate(folder, "lab", kind: kind)
            let input = try Self.payload(folder, size: 300_001)
            let encrypted = folder.appendingPathComponent("x.p7m").path
            try CMSEnvelope.encrypt(input: input, output: encrypted, to: [try RecipientCertificate(path: pair.cert)], cipher: cipher)
            let stock = folder.appendingPathComponent("stock.bin").path
            let r = try runTool("/usr/bin/openssl", ["cms", "-decrypt", "-in", encrypted, "-inform", "DER", "-inkey", pair.key, "-recip", pair.cert, "-out", stock])
            #expect(r.status == 0, "\(r.errorText)")
            let ours = folder.appendingPathComponent("ours.bin").path
            try CMSEnvelope.decrypt(
                input: encrypted, output: ours, privateKeyPEM: [UInt8](try Data(contentsOf: URL(fileURLWithPath: pair.key))),
                certificate: try RecipientCertificate(path: pair.cert))
            let original = try Data(contentsOf: URL(fileURLWithPath: input))
            #expect(try Data(contentsOf: URL(fileURLWithPath: stock)) == original)
            #expect(try Data(contentsOf: URL(fileURLWithPath: ours)) == original)
        }
    }

    @Test(arguments: [true, false])
    func stockOpenSSLEnvelopesOpenInAStream(streamed: Bool) throws {
        try withTemporaryDirectory { folder in
            let pair = try Self.certificate(folder, "lab", kind: "rsa")
            let input = try Self.payload(folder, size: 200_000)
            let encrypted = folder.appendingPathComponent("x.p7m").path
            let r = try runTool(
                "/usr/bin/openssl",
                ["cms", "-encrypt", "-aes-256-gcm", "-binary", "-outform", "DER", "-in", input, "-out", encrypted, "-recip", pair.cert] + (streamed ? ["-stream"] : []))
            try #require(r.status == 0, "\(r.errorText)")
            let ours = folder.appendingPathComponent("ours.bin").path
            try CMSEnvelope.decrypt(
                input: encrypted, output: ours, privateKeyPEM: [UInt8](try Data(contentsOf: URL(fileURLWithPath: pair.key))),
                certificate: try RecipientCertificate(path: pair.cert))
            #expect(try Data(contentsOf: URL(fileURLWithPath: ours)) == (try Data(contentsOf: URL(fileURLWithPath: input))))
        }
    }

    @Test func aChangedByteFailsAndLeavesNoOutput() throws {
        try withTemporaryDirectory { folder in
            let pair = try Self.certificate(folder, "lab", kind: "ec")
            let input = try Self.payload(folder, size: 100_000)
            let encrypted = folder.appendingPathComponent("x.p7m").path
            try CMSEnvelope.encrypt(input: input, output: encrypted, to: [try RecipientCertificate(path: pair.cert)])
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: encrypted)))
            bytes[bytes.count / 2] ^= 0x01
            try Data(bytes).write(to: URL(fileURLWithPath: encrypted))
            let ours = folder.appendingPathComponent("ours.bin").path
            let key = [UInt8](try Data(contentsOf: URL(fileURLWithPath: pair.key)))
            let certificate = try RecipientCertificate(path: pair.cert)
            let refused = #expect(throws: CohortError.self) {
                try CMSEnvelope.decrypt(input: encrypted, output: ours, privateKeyPEM: key, certificate: certificate)
            }
            // The content's integrity check fails (a security error naming the file, never a value).
            #expect(refused?.code == .security)
            #expect(refused?.location?.file == encrypted)
            #expect(!FileManager.default.fileExists(atPath: ours), "no partial plaintext is left")
        }
    }
}
