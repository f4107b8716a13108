import CohortCore
import CohortCrypto
import CohortCompression
import Foundation
import Testing

@testable import CohortPackage

/// `cohort verify` does bounded work whatever the files hold (manifest and signature caps, the
/// archive size checked before inflating, inflation stopped at what the manifest accounts for).
extension VerifierTests {
    /// A gzip bomb: one member of 16 MiB of zeros (about 16 KB compressed) repeated `copies`
    /// times — concatenated members are one valid gzip stream — so 160 copies inflate to 2.5 GiB
    /// from 2.6 MB on disk, and nothing that large is ever written.
    static func bomb(copies: Int) throws -> [UInt8] {
        let member = try GzipWriter.compress([UInt8](repeating: 0, count: 16 << 20), level: 9, threads: 1)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(member.count * copies)
        for _ in 0..<copies { bytes += member }
        return bytes
    }

    @Test func bombWhoseSizeContradictsTheManifestIsNotInflatedAtAll() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        try Data(try Self.bomb(copies: 160)).write(to: fixture.archiveURL)
        let report = fixture.verify()
        #expect(!report.passed)
        let size = try #require(report.check(named: VerificationCheck.archiveSize))
        #expect(!size.passed && size.detail.contains("but the signed manifest says") && size.detail.contains("not read or inflated"), "\(size.detail)")
        #expect(report.check(named: VerificationCheck.gzipIntegrity)?.detail.hasPrefix("not checked") == true)
        #expect(report.check(named: VerificationCheck.signature)?.passed == true, "the manifest itself is genuine")
    }

    @Test func bombUnderAGenuinelySignedManifestStopsAtTheDeclaredSizes() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        // The worst case: a manifest signed with the study key that names the bomb's size and digest.
        let bomb = try Self.bomb(copies: 160)
        try Data(bomb).write(to: fixture.archiveURL)
        try fixture.resign { $0.archive.size = UInt64(bomb.count); $0.archive.sha256 = SHA256.hex(bomb) }
        let manifest = try JSONDecoder().decode(ExportManifest.self, from: Data(contentsOf: fixture.manifestURL))
        let limit = Verifier.inflateLimit(for: manifest)
        #expect(limit < 4 << 20, "the fixture's files account for a few MiB at most")

        let report = fixture.verify()
        let gzip = try #require(report.check(named: VerificationCheck.gzipIntegrity))
        #expect(!gzip.passed && gzip.detail.contains("decompresses to more than the \(limit) bytes"), "\(gzip.detail)")
        #expect(report.check(named: VerificationCheck.archiveSize)?.passed == true)
        // The same scan, measured: it inflated one byte past the limit, not 2.5 GiB.
        let scan = ArchiveScan.run(archive: fixture.archiveURL, extractTo: nil, inflateLimit: limit)
        #expect(scan.inflatedBytes == limit + 1)
        #expect(scan.size == UInt64(bomb.count), "the raw file is still hashed whole (2.6 MB)")
        // Without a limit the same file inflates to 160 × 16 MiB: the bound is what stopped it.
        #expect(UInt64(160 << 24) > 600 * limit)
    }

    @Test func manifestAndSignatureReadsAreCapped() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        let signature = try Data(contentsOf: fixture.signatureURL)
        try (signature + Data(count: 2048)).write(to: fixture.signatureURL)
        let longSignature = fixture.verify()
        #expect(longSignature.check(named: VerificationCheck.signature)?.detail == "signature file is larger than 1024 bytes, expected 64: not read")

        try signature.write(to: fixture.signatureURL)
        let manifest = try Data(contentsOf: fixture.manifestURL)
        // Valid JSON (trailing white space) one byte over the cap.
        try (manifest + Data(repeating: 0x20, count: Verifier.maxManifestBytes + 1 - manifest.count)).write(to: fixture.manifestURL)
        let big = fixture.verify()
        #expect(big.check(named: VerificationCheck.manifestFormat)?.detail == "manifest file is larger than 16 MiB: not read")
        #expect(big.check(named: VerificationCheck.signature)?.passed == false)
        #expect(big.check(named: VerificationCheck.gzipIntegrity)?.detail.contains("nothing bounds decompression") == true)
        // At the cap exactly it is read (and fails only the signature, as the bytes changed).
        try (manifest + Data(repeating: 0x20, count: Verifier.maxManifestBytes - manifest.count)).write(to: fixture.manifestURL)
        #expect(fixture.verify().failedChecks == [VerificationCheck.signature])
    }
}
