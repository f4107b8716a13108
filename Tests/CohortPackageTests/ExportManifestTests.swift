import CohortCore
import CohortCrypto
import Foundation
import Testing

@testable import CohortPackage

struct ExportManifestTests {
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
