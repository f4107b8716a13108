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

    /// The temporary folder holds the files some check reads and no other; every member is still
    /// hashed (the report passes, and a damaged file the checks do not read still fails it).
    @Test func extraChecksGetTheFilesTheyReadAndNoOthers() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        nonisolated(unsafe) var seenByCSV: Set<String> = []
        nonisolated(unsafe) var seenByNothing: Set<String> = []
        let csv = ExtraVerificationCheck(name: "csv tables", reads: .files { $0.hasPrefix("data/csv/") }) { bag in
            seenByCSV = try Self.regularFiles(under: bag)
            return VerificationCheck(name: "csv tables", passed: true, detail: "")
        }
        let report = fixture.verify(extraChecks: [csv, Self.listing(.nothing) { seenByNothing = $0 }])
        #expect(report.passed, "\(report.text)")
        let listed = Set(try Self.listedFiles(fixture).filter { $0.hasPrefix("data/csv/") })
        #expect(listed == ["data/csv/symptoms.csv", PackageFixture.nonASCIIName])
        #expect(seenByCSV == listed)
        #expect(seenByNothing == listed, "the checks share one folder: the union of what they read")
        // Byte for byte what the bag holds.
        for path in listed {
            #expect(FileManager.default.contents(atPath: fixture.bag.appendingPathComponent(path).path) != nil)
        }

        // Nothing asked for: no file written; with .everything (the default): every one.
        nonisolated(unsafe) var none: Set<String> = ["unset"]
        #expect(fixture.verify(extraChecks: [Self.listing(.nothing) { none = $0 }]).passed)
        #expect(none.isEmpty)
        nonisolated(unsafe) var all: Set<String> = []
        #expect(fixture.verify(extraChecks: [Self.listing(.everything) { all = $0 }]).passed)
        #expect(all == Set(try Self.listedFiles(fixture)))
    }

    /// A file no check reads is still inflated and hashed against the manifest.
    @Test func aFileNoCheckReadsIsStillChecked() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        // The FHIR file's bytes changed in the bag, re-archived (the archive's digest re-signed).
        try fixture.write("data/fhir/Observation.ndjson", "{\"resourceType\":\"Patient\"}\n\n{\"resourceType\":\"Observation\"}\n")
        try fixture.rearchiveAndResign()
        let report = fixture.verify(extraChecks: [Self.listing(.files { $0.hasPrefix("data/csv/") }) { _ in }])
        #expect(!report.passed)
        #expect(report.check(named: VerificationCheck.bagManifest)?.passed == false, "\(report.text)")
    }

    /// A check that records the bag-relative paths of the regular files it finds.
    private static func listing(_ reads: ExtraVerificationCheck.Reads, _ record: @escaping (Set<String>) -> Void) -> ExtraVerificationCheck {
        ExtraVerificationCheck(name: "listing", reads: reads) { bag in
            record(try regularFiles(under: bag))
            return VerificationCheck(name: "listing", passed: true, detail: "")
        }
    }

    private static func listedFiles(_ fixture: PackageFixture) throws -> [String] {
        try JSONDecoder().decode(ExportManifest.self, from: Data(contentsOf: fixture.manifestURL)).files.map(\.path)
    }

    private static func regularFiles(under bag: URL) throws -> Set<String> {
        let base = bag.standardizedFileURL.path + "/"
        var found: Set<String> = []
        let walker = FileManager.default.enumerator(at: bag, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = walker?.nextObject() as? URL {
            guard try url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true else { continue }
            found.insert(String(url.standardizedFileURL.path.dropFirst(base.count)))
        }
        return found
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
