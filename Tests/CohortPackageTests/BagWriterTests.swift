import CohortCore
import CohortCrypto
import Foundation
import Testing

@testable import CohortPackage

struct BagWriterTests {
    @Test func writesTagFilesAndReturnsPayload() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        let contents = try BagWriter.write(bagDirectory: fixture.bag, metadata: fixture.metadata)

        let bagit = try String(contentsOf: fixture.bag.appendingPathComponent("bagit.txt"), encoding: .utf8)
        #expect(bagit == "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n")

        let info = try String(contentsOf: fixture.bag.appendingPathComponent("bag-info.txt"), encoding: .utf8)
        let octets = contents.payloadFiles.reduce(UInt64(0)) { $0 + $1.size }
        #expect(info.contains("Source-Organization: Example University\n"))
        #expect(info.contains("External-Identifier: ra-flare\n"))
        #expect(info.contains("Bagging-Date: 2025-03-14\n"))
        #expect(info.contains("Payload-Oxum: \(octets).6\n"))
        #expect(info.contains("Bag-Software-Agent: cohort 0.1.0\n"))
        #expect(info.contains("Cohort-Protocol-Revision: 3\n"))
        #expect(info.contains("Cohort-Recipient: analyst-1\n"))

        #expect(contents.payloadFiles.map(\.path) == contents.payloadFiles.map(\.path).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        let csv = try #require(contents.payloadFiles.first { $0.path == "data/csv/symptoms.csv" })
        #expect(csv.rows == 3)
        #expect(csv.sha256 == SHA256.hex(try Data(contentsOf: fixture.bag.appendingPathComponent(csv.path))))
        #expect(contents.payloadFiles.first { $0.path == "data/fhir/bundles/AB12.json" }?.rows == 3)
        #expect(contents.payloadFiles.first { $0.path == "data/fhir/Observation.ndjson" }?.rows == 2)
        #expect(contents.payloadFiles.first { $0.path == "data/README.txt" }?.rows == nil)

        let manifest = try String(contentsOf: fixture.bag.appendingPathComponent("manifest-sha256.txt"), encoding: .utf8)
        let lines = manifest.split(separator: "\n").map(String.init)
        #expect(lines == contents.payloadFiles.map { "\($0.sha256)  \($0.path)" })
        #expect(lines.contains { $0.hasSuffix("  " + PackageFixture.nonASCIIName) })

        let tagManifest = try String(contentsOf: fixture.bag.appendingPathComponent("tagmanifest-sha256.txt"), encoding: .utf8)
        #expect(tagManifest.split(separator: "\n").map { $0.split(separator: " ").last.map(String.init) ?? "" } == ["bag-info.txt", "bagit.txt", "manifest-sha256.txt"])
        #expect(contents.tagFiles.map(\.path) == BagWriter.tagFileNames)
    }

    @Test func percentEncodesLineBreaksAndPercentInManifestPaths() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.write("data/odd 100%\nname.txt", "x")
        _ = try BagWriter.write(bagDirectory: fixture.bag, metadata: fixture.metadata)
        let manifest = try String(contentsOf: fixture.bag.appendingPathComponent("manifest-sha256.txt"), encoding: .utf8)
        #expect(manifest.contains("  data/odd 100%25%0Aname.txt\n"))
        #expect(BagPath.decode("data/odd 100%25%0aname.txt") == "data/odd 100%\nname.txt")
    }

    @Test func refusesFilesOutsideData() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try Data("x".utf8).write(to: fixture.bag.appendingPathComponent("stray.txt"))
        let refused = #expect(throws: CohortError.self) { try BagWriter.write(bagDirectory: fixture.bag, metadata: fixture.metadata) }
        #expect(refused?.code == .invalidInput, "a file outside data/ is refused")
    }

    @Test func refusesMultiLineMetadata() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        var metadata = fixture.metadata
        metadata.recipient = "a\nPayload-Oxum: 1.1"
        let refused = #expect(throws: CohortError.self) { try BagWriter.write(bagDirectory: fixture.bag, metadata: metadata) }
        #expect(refused?.code == .invalidInput, "a line break in a metadata value is refused")
    }

    @Test func bagNameUsesUTCStamp() {
        let time = Timestamp(epochMilliseconds: 1_741_941_000_123, utcOffsetSeconds: 3600)
        #expect(BagWriter.bagName(studyID: "ra-flare", createdAt: time) == "ra-flare-20250314T083000Z")
    }
}
