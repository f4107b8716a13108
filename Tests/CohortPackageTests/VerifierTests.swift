import CohortCore
import CohortCrypto
import Foundation
import Testing

@testable import CohortPackage

struct VerifierTests {
    @Test func untouchedExportPassesEveryCheck() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        let report = fixture.verify()
        #expect(report.passed, "\(report.text)")
        #expect(report.failedChecks.isEmpty)
        let names = report.checks.map(\.name)
        for name in [
            VerificationCheck.signature, VerificationCheck.signerKey, VerificationCheck.archiveSize, VerificationCheck.archiveDigest,
            VerificationCheck.gzipIntegrity, VerificationCheck.tarStructure, VerificationCheck.bagDeclaration,
            VerificationCheck.bagManifest, VerificationCheck.tagManifest, VerificationCheck.payloadOxum,
            VerificationCheck.signedFiles, VerificationCheck.unlistedFiles, VerificationCheck.auditCheckpoint,
        ] {
            #expect(names.contains(name), "\(name)")
        }
        #expect(report.text.contains("✔ signature  Ed25519 \(fixture.key.publicKey.fingerprint)"))
        #expect(report.text.hasSuffix("checks passed\n"))
    }

    @Test func reportEncodesAsJSON() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        let report = fixture.verify()
        let decoded = try JSONDecoder().decode(VerificationReport.self, from: JSONEncoder().encode(report))
        #expect(decoded == report)
        let object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(report)) as? [String: Any])
        #expect(object["passed"] as? Bool == true)
        #expect((object["checks"] as? [[String: Any]])?.first?["name"] as? String == "signature")
    }

    @Test func flippedArchiveByteIsCaught() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        var bytes = try Data(contentsOf: fixture.archiveURL)
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: fixture.archiveURL)
        let report = fixture.verify()
        #expect(!report.passed)
        #expect(report.failedChecks.contains(VerificationCheck.archiveDigest))
        #expect(report.failedChecks.contains(VerificationCheck.gzipIntegrity))
        #expect(report.check(named: VerificationCheck.signature)?.passed == true)
        #expect(report.text.contains("✘ archive digest  expected "))
    }

    @Test func truncatedArchiveIsCaught() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        let bytes = try Data(contentsOf: fixture.archiveURL)
        try bytes.prefix(bytes.count - 20).write(to: fixture.archiveURL)
        let report = fixture.verify()
        #expect(!report.passed)
        #expect(report.failedChecks.contains(VerificationCheck.archiveSize))
        #expect(report.failedChecks.contains(VerificationCheck.archiveDigest))
        #expect(report.failedChecks.contains(VerificationCheck.gzipIntegrity))
    }

    @Test func editedManifestIsCaught() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        let text = try String(contentsOf: fixture.manifestURL, encoding: .utf8)
        try Data(text.replacingOccurrences(of: "\"withdrawn_exclude\"", with: "\"other\"").utf8).write(to: fixture.manifestURL)
        let report = fixture.verify()
        #expect(report.failedChecks == [VerificationCheck.signature])
    }

    @Test func signatureByAnotherKeyIsCaught() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        try fixture.resign(with: try Ed25519PrivateKey.generate())
        let report = fixture.verify()
        #expect(report.failedChecks == [VerificationCheck.signature])
    }

    @Test func anotherSignerKeyIsNamed() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        // Everything consistent, but under a key the auditor does not trust.
        let other = try Ed25519PrivateKey.generate()
        let report = fixture.verify(publicKey: other.publicKey)
        #expect(report.failedChecks.contains(VerificationCheck.signature))
        #expect(report.failedChecks.contains(VerificationCheck.signerKey))
        #expect(report.failedChecks.contains(VerificationCheck.auditCheckpoint))
    }

    @Test func missingSignatureIsCaught() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        try FileManager.default.removeItem(at: fixture.signatureURL)
        let report = fixture.verify()
        #expect(report.failedChecks == [VerificationCheck.signature])
        #expect(report.check(named: VerificationCheck.signature)?.detail.contains("missing") == true)
    }

    @Test func missingArchiveIsCaught() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        try FileManager.default.removeItem(at: fixture.archiveURL)
        let report = fixture.verify()
        #expect(!report.passed)
        #expect(report.check(named: VerificationCheck.archiveDigest)?.detail == "archive file is missing")
        #expect(report.failedChecks.contains(VerificationCheck.signedFiles))
    }

    @Test func fileAddedToTheBagIsCaught() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        try fixture.write("data/csv/extra.csv", "a\n1\n")
        try fixture.rearchiveAndResign()
        let report = fixture.verify()
        #expect(report.check(named: VerificationCheck.archiveDigest)?.passed == true)
        #expect(report.check(named: VerificationCheck.signature)?.passed == true)
        #expect(report.failedChecks.contains(VerificationCheck.unlistedFiles))
        #expect(report.failedChecks.contains(VerificationCheck.bagManifest))
        #expect(report.check(named: VerificationCheck.unlistedFiles)?.detail.contains("data/csv/extra.csv") == true)
    }

    @Test func fileAddedWithBagManifestsUpdatedIsStillCaught() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        try fixture.write("data/csv/extra.csv", "a\n1\n")
        _ = try BagWriter.write(bagDirectory: fixture.bag, metadata: fixture.metadata)
        try fixture.rearchiveAndResign()
        let report = fixture.verify()
        #expect(report.check(named: VerificationCheck.bagManifest)?.passed == true)
        #expect(report.check(named: VerificationCheck.payloadOxum)?.passed == true)
        #expect(report.failedChecks.contains(VerificationCheck.unlistedFiles))
    }

    @Test func changedRowWithBagManifestsUpdatedIsCaughtBySignedDigest() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        try fixture.write(
            "data/csv/symptoms.csv",
            "pseudonym,day,pain,note\nAB12,2025-01-02,9,\"stiff\nmorning\"\nAB12,2025-01-03,3,ok\r\nCD34,2025-01-02,7,\"said \"\"ouch\"\"\"\n")
        _ = try BagWriter.write(bagDirectory: fixture.bag, metadata: fixture.metadata)
        try fixture.rearchiveAndResign()
        let report = fixture.verify()
        #expect(report.check(named: VerificationCheck.bagManifest)?.passed == true)
        #expect(report.check(named: VerificationCheck.tagManifest)?.passed == true)
        #expect(report.check(named: VerificationCheck.archiveDigest)?.passed == true)
        #expect(report.failedChecks == [VerificationCheck.signedFiles])
        #expect(report.check(named: VerificationCheck.signedFiles)?.detail.contains("data/csv/symptoms.csv") == true)
    }

    @Test func forgedAuditCheckpointIsCaught() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        try fixture.resign { $0.auditCheckpoint.seq = 41 }
        #expect(fixture.verify().failedChecks == [VerificationCheck.auditCheckpoint])
    }

    @Test func extraChecksRunOnTheExtractedBagWhichIsRemoved() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        nonisolated(unsafe) var seen: URL?
        let scan = ExtraVerificationCheck(name: "residual PII") { bag in
            seen = bag
            let csv = try String(contentsOf: bag.appendingPathComponent("data/csv/symptoms.csv"), encoding: .utf8)
            return VerificationCheck(name: "residual PII", passed: !csv.contains("Jane"), detail: "no identifiers found")
        }
        let failing = ExtraVerificationCheck(name: "audit chain") { _ in throw CohortError(.integrity, "chain broken at seq 7") }
        let report = fixture.verify(extraChecks: [scan, failing])
        #expect(report.check(named: "residual PII")?.passed == true)
        #expect(report.check(named: "audit chain")?.detail == "chain broken at seq 7")
        #expect(report.failedChecks == ["audit chain"])
        let bag = try #require(seen)
        #expect(bag.lastPathComponent == fixture.bagName)
        #expect(!FileManager.default.fileExists(atPath: bag.path))
    }

    @Test func extraChecksDoNotRunOnADamagedArchive() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        let bytes = try Data(contentsOf: fixture.archiveURL)
        try bytes.prefix(bytes.count / 2).write(to: fixture.archiveURL)
        let check = ExtraVerificationCheck(name: "residual PII") { _ in VerificationCheck(name: "residual PII", passed: true, detail: "") }
        let report = fixture.verify(extraChecks: [check])
        #expect(report.check(named: "residual PII")?.passed == false)
    }
}
