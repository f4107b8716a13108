import CohortCore
import CohortCrypto
import CohortIO
import Foundation
import Testing

@testable import CohortPackage

/// The bag's digests computed while the files are written (``PayloadDigests``) against the same
/// files read back: the description of a file written through a tap is what reading it gives,
/// and a file changed after its writer closed it is read again.
struct PayloadDigestsTests {
    /// Writes each file through `BufferedFileWriter` with the digests' taps, in pieces of the
    /// given sizes (some larger than the writer's 64 KiB buffer, so they bypass it).
    private func writeTapped(_ fixture: PackageFixture, digests: PayloadDigests, files: [(String, [UInt8])]) throws {
        var generator = SplitMix(seed: 28)
        for (relative, bytes) in files {
            let url = fixture.bag.appendingPathComponent(relative)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            let writer = try BufferedFileWriter(url: url, relativePath: relative, taps: digests.taps)
            var offset = 0
            while offset < bytes.count {
                let piece = min(bytes.count - offset, [1, 7, 300, 70_000, 200_000][Int(generator.next() % 5)])
                try writer.write(Array(bytes[offset..<offset + piece]))
                offset += piece
            }
            try writer.close()
        }
    }

    /// Payload files like an export's: CSV with quoted line breaks and CRLF, NDJSON with blank
    /// lines, a FHIR Bundle, and a file of several MB.
    private func payload() -> [(String, [UInt8])] {
        var big: [UInt8] = []
        var row = 0
        while big.count < 3_000_000 {
            big += Array("{\"resourceType\":\"Observation\",\"id\":\"\(row)\",\"note\":\"line \(row % 13)\"}\n".utf8)
            if row % 1000 == 0 { big += Array("  \n".utf8) }
            row += 1
        }
        var csv = Array("pseudonym,note\r\n".utf8)
        for i in 0..<20_000 { csv += Array("P\(i),\"said \"\"x\"\"\nthen \(i)\"\r\n".utf8) }
        return [
            ("data/fhir/Observation.ndjson", big),
            ("data/csv/notes.csv", csv),
            ("data/fhir/bundles/EF56.json", Array("{\"resourceType\":\"Bundle\",\"entry\":[{\"a\":[1,{\"b\":\"]\"}]},{}]}".utf8)),
            ("data/reports/compliance.json", Array("{}\n".utf8)),
            ("data/json/empty.ndjson", []),
        ]
    }

    @Test func describesEachFileAsReadingItBack() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        let digests = PayloadDigests()
        let files = payload()
        try writeTapped(fixture, digests: digests, files: files)
        #expect(digests.count == files.count)
        for (relative, bytes) in files {
            let path = fixture.bag.appendingPathComponent(relative).path
            let described = try #require(digests.description(of: relative, identity: FileIdentity(path: path)))
            // Recomputed from the file on disk by other routes: the whole file's SHA-256 and the row rule.
            let onDisk = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(Array(onDisk) == bytes)
            #expect(described.sha256 == SHA256.hex(onDisk))
            #expect(described.size == UInt64(onDisk.count))
            #expect(described.rows == (try RowCounter.count(fileAt: URL(fileURLWithPath: path), path: relative)))
            #expect(described == (try BagWriter.hash(path: path, relative: relative)))
        }
        // The bag with the descriptions is the bag read from disk, tag files included.
        let tapped = try BagWriter.write(bagDirectory: fixture.bag, metadata: fixture.metadata, digests: digests)
        let tagsTapped = try fixture.tagFileBytes()
        let read = try BagWriter.write(bagDirectory: fixture.bag, metadata: fixture.metadata)
        #expect(tapped == read)
        #expect(tagsTapped == (try fixture.tagFileBytes()))
    }

    @Test func readsAFileChangedAfterItsWriterClosedIt() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        let digests = PayloadDigests()
        try writeTapped(fixture, digests: digests, files: payload())
        let grown = fixture.bag.appendingPathComponent("data/csv/notes.csv")
        let handle = try FileHandle(forWritingTo: grown)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("P9,\"late\"\r\n".utf8))
        try handle.close()
        // Same size, other bytes, and its modification time set one second back (an explicit
        // time, so the test does not depend on the clock ticking between two writes).
        let same = fixture.bag.appendingPathComponent("data/fhir/Observation.ndjson")
        let before = try #require(FileIdentity(path: same.path))
        var bytes = try Data(contentsOf: same)
        bytes[10] = UInt8(ascii: "X")
        let fd = open(same.path, O_WRONLY)
        #expect(fd >= 0)
        _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        let mtime = timespec(tv_sec: before.modifiedTime.seconds - 1, tv_nsec: before.modifiedTime.nanoseconds)
        var times = [mtime, mtime]
        #expect(futimens(fd, &times) == 0)
        close(fd)
        #expect(digests.description(of: "data/csv/notes.csv", identity: FileIdentity(path: grown.path)) == nil)
        #expect(digests.description(of: "data/fhir/Observation.ndjson", identity: FileIdentity(path: same.path)) == nil)
        let contents = try BagWriter.write(bagDirectory: fixture.bag, metadata: fixture.metadata, digests: digests)
        for file in contents.payloadFiles {
            let url = fixture.bag.appendingPathComponent(file.path)
            #expect(file.sha256 == SHA256.hex(try Data(contentsOf: url)), "\(file.path)")
            #expect(file.rows == (try RowCounter.count(fileAt: url, path: file.path)), "\(file.path)")
        }
        #expect(contents.payloadFiles.first { $0.path == "data/csv/notes.csv" }?.rows == 20_001)
    }

    @Test func aFileEndingInsideQuotesIsLeftToTheBagsRead() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        let digests = PayloadDigests()
        try writeTapped(fixture, digests: digests, files: [("data/csv/open.csv", Array("a,b\n1,\"open\n".utf8))])
        #expect(digests.count == 0)
        #expect(throws: CohortError.self) { try BagWriter.write(bagDirectory: fixture.bag, metadata: fixture.metadata, digests: digests) }
    }
}

/// A deterministic generator for the write pieces' sizes.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension PackageFixture {
    /// The bag's tag files, by name.
    func tagFileBytes() throws -> [String: Data] {
        var tags: [String: Data] = [:]
        for name in BagWriter.tagFileNames { tags[name] = try Data(contentsOf: bag.appendingPathComponent(name)) }
        return tags
    }
}
