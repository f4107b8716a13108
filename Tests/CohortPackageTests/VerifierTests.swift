import CohortCore
import CohortCrypto
import Foundation
import Synchronization
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

    @Test func theProgressHookSeesIncreasingByteCountsEndingAtTheArchiveSize() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        // Hard-to-compress rows, so the archive spans many reads (the reader takes 64 KiB at a time).
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var csv = "id,value\n"
        for i in 0..<20_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            csv += "\(i),\(String(state, radix: 16))\n"
        }
        try fixture.write("data/csv/noise.csv", csv)
        try fixture.export()
        let size = try #require(try FileManager.default.attributesOfItem(atPath: fixture.archiveURL.path)[.size] as? NSNumber).uint64Value
        let calls = Mutex<[(read: UInt64, total: UInt64)]>([])
        let report = Verifier.verify(archive: fixture.archiveURL, publicKey: fixture.key.publicKey) { read, total in
            calls.withLock { $0.append((read, total)) }
        }
        #expect(report.passed, "\(report.text)")
        let seen = calls.withLock { $0 }
        #expect(seen.count > 2, "an archive of \(size) bytes is read in several steps")
        #expect(seen.allSatisfy { $0.total == size }, "the total is the archive's size")
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.read < $1.read }, "counts only grow")
        #expect(seen.last?.read == size, "the last count is the whole archive")
    }

    @Test func theProgressHookIsNotCalledForAnArchiveThatIsNotRead() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        // One byte more than the signed size: the verifier refuses to read or inflate it.
        let handle = try FileHandle(forWritingTo: fixture.archiveURL)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0]))
        try handle.close()
        let calls = Mutex(0)
        let report = Verifier.verify(archive: fixture.archiveURL, publicKey: fixture.key.publicKey) { _, _ in calls.withLock { $0 += 1 } }
        #expect(!report.passed)
        #expect(calls.withLock { $0 } == 0)
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

    /// A damaged gzip stream is not read to the end and nothing in it is vouched for by its CRC:
    /// no check of the bag's contents may pass then, and none may blame the bag for a file that
    /// could lie past the damage.
    @Test func checksThatCouldNotRunOnADamagedStreamSaySo() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        #expect(fixture.verify().passed, "the intact archive passes (the damage is what changes)")
        var bytes = try Data(contentsOf: fixture.archiveURL)
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: fixture.archiveURL)
        let report = fixture.verify()
        for name in [
            VerificationCheck.bagDeclaration, VerificationCheck.bagManifest, VerificationCheck.tagManifest, VerificationCheck.payloadOxum,
            VerificationCheck.signedFiles, VerificationCheck.unlistedFiles,
        ] {
            let check = try #require(report.check(named: name))
            #expect(!check.passed && check.detail.hasPrefix("not checked"), "\(name): \(check.detail)")
        }
        #expect(!report.text.contains("✔ unlisted files") && !report.text.contains("✔ bagit.txt"))
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
