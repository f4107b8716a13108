import CohortCore
import CohortCrypto
import Foundation
import Testing

@testable import CohortPackage

struct ExportManifestTests {
    static func manifest(kAnonymity: ExportManifest.KAnonymity?) -> ExportManifest {
        ExportManifest(
            study: .init(id: "ra-flare", title: "RA flare study"), protocolReference: .init(revision: 3, sha256: String(repeating: "ab", count: 32)),
            policySHA256: String(repeating: "ef", count: 32), recipient: "analyst-1", toolVersion: "0.1.0",
            createdAt: Timestamp(epochMilliseconds: 1_767_225_600_000), archive: .init(fileName: "a.tar.gz", sha256: String(repeating: "01", count: 32), size: 10),
            files: [], exclusions: [], signer: .init(keyFingerprint: "unset"),
            auditCheckpoint: AuditCheckpoint(seq: 1, headHash: String(repeating: "cd", count: 32), signature: "c2ln"), kAnonymity: kAnonymity)
    }

    /// Manifests written before `k_anonymity` existed decode, and without k the bytes are unchanged.
    @Test func kAnonymityIsOptional() throws {
        let bytes = try Self.manifest(kAnonymity: nil).encoded()
        #expect(!String(decoding: bytes, as: UTF8.self).contains("k_anonymity"))
        let decoded = try JSONDecoder().decode(ExportManifest.self, from: Data(bytes))
        #expect(decoded.kAnonymity == nil && decoded == Self.manifest(kAnonymity: nil))
    }

    @Test func kAnonymityRoundTrips() throws {
        let k = ExportManifest.KAnonymity(
            requestedK: 5, achievedK: 6, quasiIdentifiers: ["sex", "birth_year", "utc_offset"], classes: 12,
            generalized: ["birth_year": "10-year range"], suppressedValues: ["sex": 2], suppressedParticipants: 1, sensitive: ["medications.text"])
        let bytes = try Self.manifest(kAnonymity: k).encoded()
        let text = String(decoding: bytes, as: UTF8.self)
        for key in ["\"k_anonymity\"", "\"achieved_k\" : 6", "\"quasi_identifiers\"", "\"generalized\"", "\"suppressed_participants\" : 1"] {
            #expect(text.contains(key), "\(key)")
        }
        #expect(try JSONDecoder().decode(ExportManifest.self, from: Data(bytes)).kAnonymity == k)
    }

    /// Reviewed exceptions are an optional field: a manifest without them encodes without the
    /// key (old manifests stay byte-identical) and decodes with nil; with them, they round-trip.
    @Test func reviewedExceptionsAreOptionalAndRoundTrip() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        let contents = try BagWriter.write(bagDirectory: fixture.bag, metadata: fixture.metadata)
        let archive = ArchiveResult(url: fixture.archiveURL, sha256: String(repeating: "0", count: 64), size: 1)
        let plain = try fixture.manifest(bag: contents, archive: archive)
        let plainText = String(decoding: try plain.encoded(), as: UTF8.self)
        #expect(!plainText.contains("residual_exceptions"))
        #expect(try JSONDecoder().decode(ExportManifest.self, from: Data(plainText.utf8)).residualExceptions == nil)
        #expect(plain.withResidualExceptions([]) == plain)

        let hash = String(repeating: "ab", count: 32)
        let reviewed = plain.withResidualExceptions([
            .init(table: "symptom_logs", column: "note", valueSHA256: hash, reviewer: "Dr. Ada Reviewer", reason: "IRB amendment 7", findings: 2)
        ])
        let text = String(decoding: try reviewed.encoded(), as: UTF8.self)
        #expect(text.contains("\"residual_exceptions\"") && text.contains("\"value_sha256\" : \"\(hash)\""), "\(text)")
        #expect(try JSONDecoder().decode(ExportManifest.self, from: Data(text.utf8)) == reviewed)
    }
}
