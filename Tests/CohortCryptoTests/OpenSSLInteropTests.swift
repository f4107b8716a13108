import CohortCore
import Foundation
import Testing
import CohortCrypto

/// Keys and signatures made by cohort work with the stock `openssl` tool, and vice versa —
/// what an IRB auditor relies on to verify an export without cohort.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")))
struct OpenSSLInteropTests {
    static let openssl = "/usr/bin/openssl"

    @Test func cohortSignatureVerifiesWithOpenSSL() throws {
        try withTemporaryDirectory { directory in
            let key = try Ed25519PrivateKey.generate()
            let message = Array("{\"archive\":\"study-20250101T000000Z.tar.gz\"}\n".utf8)
            let signature = try key.signature(for: message)
            let pub = directory.appendingPathComponent("signing.pub.pem")
            let msg = directory.appendingPathComponent("manifest.json")
            let sig = directory.appendingPathComponent("manifest.json.sig")
            try Data(key.publicKey.pemRepresentation.utf8).write(to: pub)
            try Data(message).write(to: msg)
            try Data(signature).write(to: sig)

            let good = try runTool(
                Self.openssl, ["pkeyutl", "-verify", "-pubin", "-inkey", pub.path, "-rawin", "-in", msg.path, "-sigfile", sig.path])
            #expect(good.status == 0, "openssl rejected the signature: \(good.errorText)")

            // The same check must fail for a changed message, or the test above proves nothing.
            try Data(message + [0x20]).write(to: msg)
            let bad = try runTool(
                Self.openssl, ["pkeyutl", "-verify", "-pubin", "-inkey", pub.path, "-rawin", "-in", msg.path, "-sigfile", sig.path])
            #expect(bad.status != 0)
        }
    }

    @Test func openSSLReadsCohortPrivateKey() throws {
        try withTemporaryDirectory { directory in
            let key = try Ed25519PrivateKey.generate()
            let pem = directory.appendingPathComponent("signing.pem")
            try Data(key.pemRepresentation.utf8).write(to: pem)
            let check = try runTool(Self.openssl, ["pkey", "-in", pem.path, "-noout"])
            #expect(check.status == 0, "openssl could not read the key: \(check.errorText)")
            // And it derives the same public key.
            let pub = try runTool(Self.openssl, ["pkey", "-in", pem.path, "-pubout"])
            #expect(pub.status == 0)
            #expect(String(decoding: pub.output, as: UTF8.self) == key.publicKey.pemRepresentation)
        }
    }

    @Test func openSSLGeneratedKeyLoadsAndSignsIdentically() throws {
        try withTemporaryDirectory { directory in
            let pem = directory.appendingPathComponent("openssl.pem")
            let generate = try runTool(Self.openssl, ["genpkey", "-algorithm", "ed25519", "-out", pem.path])
            try #require(generate.status == 0, "openssl genpkey failed: \(generate.errorText)")
            let key = try Ed25519PrivateKey(pemRepresentation: String(decoding: try Data(contentsOf: pem), as: UTF8.self))

            let message = Array("withdrawal receipt".utf8)
            let msg = directory.appendingPathComponent("receipt.txt")
            try Data(message).write(to: msg)
            let signed = try runTool(Self.openssl, ["pkeyutl", "-sign", "-inkey", pem.path, "-rawin", "-in", msg.path])
            try #require(signed.status == 0, "openssl pkeyutl -sign failed: \(signed.errorText)")
            #expect(signed.output == (try key.signature(for: message)))
            #expect(key.publicKey.isValidSignature(signed.output, for: message))

            let pub = try runTool(Self.openssl, ["pkey", "-in", pem.path, "-pubout"])
            let publicKey = try Ed25519PublicKey(pemRepresentation: String(decoding: pub.output, as: UTF8.self))
            #expect(publicKey == key.publicKey)
        }
    }

    @Test func nonEd25519KeysAreRefused() throws {
        try withTemporaryDirectory { directory in
            let pem = directory.appendingPathComponent("ec.pem")
            let generate = try runTool(
                Self.openssl, ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", pem.path])
            try #require(generate.status == 0)
            let refused = #expect(throws: CohortError.self) {
                try Ed25519PrivateKey(pemRepresentation: String(decoding: try Data(contentsOf: pem), as: UTF8.self))
            }
            #expect(refused?.code == .invalidInput, "an EC key is not an Ed25519 key")
        }
    }
}
