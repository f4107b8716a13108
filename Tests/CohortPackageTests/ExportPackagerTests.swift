import CohortCore
import CohortCrypto
import Foundation
import Testing

@testable import CohortPackage

struct ExportPackagerTests {
    @Test func publishesArchiveManifestAndSignature() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        let published = try fixture.export()
        let names = try FileManager.default.contentsOfDirectory(atPath: fixture.root.appendingPathComponent("out").path).sorted()
        #expect(names == ["\(fixture.bagName).manifest.json", "\(fixture.bagName).manifest.json.sig", "\(fixture.bagName).tar.gz"])
        let manifest = published.signed.manifest
        #expect(manifest.signer.keyFingerprint == fixture.key.publicKey.fingerprint)
        #expect(manifest.archive.fileName == "\(fixture.bagName).tar.gz")
        #expect(manifest.archive.sha256 == published.archive.sha256)
        // Manifest bytes are exactly the canonical pretty JSON plus a newline, snake_case.
        let bytes = try Data(contentsOf: fixture.manifestURL)
        #expect([UInt8](bytes) == (try manifest.encoded()))
        let text = String(decoding: bytes, as: UTF8.self)
        for key in ["\"policy_sha256\"", "\"tool_version\"", "\"created_at\"", "\"file_name\"", "\"key_fingerprint\"", "\"audit_checkpoint\"", "\"head_hash\"", "\"protocol\""] {
            #expect(text.contains(key), "\(key)")
        }
        #expect(text.hasSuffix("}\n"))
        #expect(try Data(contentsOf: fixture.signatureURL).count == 64)
    }

    @Test func opensslVerifiesTheSignature() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        let pem = fixture.root.appendingPathComponent("signing.pub.pem")
        try Data(fixture.key.publicKey.pemRepresentation.utf8).write(to: pem)
        let arguments = ["pkeyutl", "-verify", "-pubin", "-inkey", pem.path, "-rawin", "-in", fixture.manifestURL.path, "-sigfile", fixture.signatureURL.path]
        #expect(try runTool("/usr/bin/openssl", arguments).status == 0)
        // And rejects a changed manifest.
        try Data((try Data(contentsOf: fixture.manifestURL)) + Data(" ".utf8)).write(to: fixture.manifestURL)
        #expect(try runTool("/usr/bin/openssl", arguments).status != 0)
    }

    @Test func sha256sumChecksTheArchiveAgainstTheManifest() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        let published = try fixture.export()
        let line = "\(published.archive.sha256)  \(fixture.archiveURL.lastPathComponent)\n"
        let list = fixture.root.appendingPathComponent("out/SHA256SUMS")
        try Data(line.utf8).write(to: list)
        #expect(try runTool("/usr/bin/sha256sum", ["-c", list.lastPathComponent], in: list.deletingLastPathComponent()).status == 0)
    }

    @Test func failedArchiveWriteLeavesNoFinalNamedFile() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        let contents = try BagWriter.write(bagDirectory: fixture.bag, metadata: fixture.metadata)
        let refused = #expect(throws: CohortError.self) {
            _ = try ExportPackager.publish(
                bagDirectory: fixture.bag, archiveURL: fixture.archiveURL, createdAt: PackageFixture.createdAt, level: 6,
                signer: ManifestSigner(key: fixture.key), faultAfterBytes: 50
            ) { try fixture.manifest(bag: contents, archive: $0) }
        }
        #expect(refused?.code == .system, "the injected write fault")
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.root.appendingPathComponent("out").path).isEmpty)
    }

    @Test func failedManifestLeavesNoFile() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        _ = try BagWriter.write(bagDirectory: fixture.bag, metadata: fixture.metadata)
        #expect(throws: CohortError.self) {
            _ = try ExportPackager.publish(
                bagDirectory: fixture.bag, archiveURL: fixture.archiveURL, createdAt: PackageFixture.createdAt,
                signer: ManifestSigner(key: fixture.key)
            ) { _ in throw CohortError(.policy, "residual PII found") }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.root.appendingPathComponent("out").path).isEmpty)
    }

    @Test func refusesWhenAnyFinalNameExists() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try Data("old".utf8).write(to: fixture.signatureURL)
        #expect(throws: CohortError.self) { try fixture.export() }
        #expect(!FileManager.default.fileExists(atPath: fixture.archiveURL.path))
        #expect(try Data(contentsOf: fixture.signatureURL) == Data("old".utf8))
    }

    @Test func signerWritesBesideAnExistingArchive() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        let contents = try BagWriter.write(bagDirectory: fixture.bag, metadata: fixture.metadata)
        let archive = try ArchiveWriter.write(bagDirectory: fixture.bag, to: fixture.archiveURL, createdAt: PackageFixture.createdAt)
        let signed = try ManifestSigner(key: fixture.key).write(try fixture.manifest(bag: contents, archive: archive), forArchive: fixture.archiveURL)
        #expect(signed.manifestURL == fixture.manifestURL)
        #expect(signed.signatureURL == fixture.signatureURL)
        #expect(fixture.verify().passed)
    }
}
