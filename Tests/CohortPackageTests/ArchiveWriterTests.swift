import CohortCore
import CohortCrypto
import Foundation
import Testing

@testable import CohortPackage

struct ArchiveWriterTests {
    @Test func stockToolsAcceptTheArchive() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        let published = try fixture.export()
        let archive = fixture.archiveURL.path

        #expect(try runTool("/usr/bin/gzip", ["-t", archive]).status == 0)
        let listing = try runTool("/usr/bin/tar", ["-tzf", archive])
        #expect(listing.status == 0)
        let names = listing.output.split(separator: "\n").map(String.init)
        #expect(names.first == fixture.bagName + "/")
        #expect(names.allSatisfy { $0.hasPrefix(fixture.bagName + "/") })
        #expect(names.contains(fixture.bagName + "/" + PackageFixture.longName))
        #expect(names.contains(fixture.bagName + "/" + PackageFixture.nonASCIIName))
        #expect(!names.contains { $0.contains("PaxHeaders") })

        let out = fixture.root.appendingPathComponent("extract")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        #expect(try runTool("/usr/bin/tar", ["-xzf", archive, "-C", out.path]).status == 0)
        for file in try BagWriter.write(bagDirectory: fixture.bag, metadata: fixture.metadata).payloadFiles {
            let extracted = out.appendingPathComponent(fixture.bagName).appendingPathComponent(file.path)
            #expect(SHA256.hex(try Data(contentsOf: extracted)) == file.sha256, "\(file.path)")
        }
        // The archive digest returned is the digest of the file on disk.
        #expect(published.archive.sha256 == SHA256.hex(try Data(contentsOf: fixture.archiveURL)))
        #expect(published.archive.size == UInt64(try Data(contentsOf: fixture.archiveURL).count))
    }

    @Test func paxHeadersCarryLongAndNonASCIINames() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        _ = try BagWriter.write(bagDirectory: fixture.bag, metadata: fixture.metadata)
        var tar: [UInt8] = []
        try ArchiveWriter.writeTar(bagDirectory: fixture.bag, createdAt: PackageFixture.createdAt) { tar.append(contentsOf: $0) }
        #expect(tar.count % 512 == 0)
        #expect(tar.suffix(1024).allSatisfy { $0 == 0 })
        // Find the pax header blocks (typeflag 'x') and their `path=` records.
        var paxPaths: [String] = []
        var offset = 0
        while offset + 512 <= tar.count, tar[offset] != 0 {
            let block = Array(tar[offset..<(offset + 512)])
            let size = Int(TarHeader.octal(block, TarHeader.sizeField) ?? 0)
            #expect(TarHeader.octal(block, TarHeader.mtimeField) == 1_741_941_000)
            #expect(TarHeader.octal(block, TarHeader.uidField) == 0)
            if block[156] == UInt8(ascii: "x"), let records = TarHeader.parsePax(Array(tar[(offset + 512)..<(offset + 512 + size)])) {
                paxPaths.append(String(decoding: records["path"] ?? [], as: UTF8.self))
            }
            offset += 512 + (size + 511) / 512 * 512
        }
        #expect(paxPaths.contains(fixture.bagName + "/" + PackageFixture.longName))
        #expect(paxPaths.contains(fixture.bagName + "/" + PackageFixture.nonASCIIName))
        #expect(Array((fixture.bagName + "/" + PackageFixture.longName).utf8).count > 100)
    }

    @Test(arguments: [1, 6, 9])
    func sameInputsGiveByteIdenticalArchives(level: Int) throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        _ = try BagWriter.write(bagDirectory: fixture.bag, metadata: fixture.metadata)
        let first = fixture.root.appendingPathComponent("out/first.tar.gz")
        let second = fixture.root.appendingPathComponent("out/second.tar.gz")
        let a = try ArchiveWriter.write(bagDirectory: fixture.bag, to: first, createdAt: PackageFixture.createdAt, level: level)
        // Touch the files: on-disk times must not leak into the archive.
        for file in ["data/README.txt", "bagit.txt"] {
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSince1970: 0)], ofItemAtPath: fixture.bag.appendingPathComponent(file).path)
        }
        let b = try ArchiveWriter.write(bagDirectory: fixture.bag, to: second, createdAt: PackageFixture.createdAt, level: level)
        #expect(a.sha256 == b.sha256)
        #expect(try Data(contentsOf: first) == Data(contentsOf: second))
    }

    @Test func entriesAreSortedWithDirectoriesFirst() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        _ = try ArchiveWriter.write(bagDirectory: fixture.bag, to: fixture.archiveURL, createdAt: PackageFixture.createdAt)
        let names = try runTool("/usr/bin/tar", ["-tzf", fixture.archiveURL.path]).output.split(separator: "\n").map(String.init)
        let prefix = fixture.bagName + "/"
        let directory = try #require(names.firstIndex(of: prefix + "data/csv/"))
        let file = try #require(names.firstIndex(of: prefix + "data/csv/symptoms.csv"))
        #expect(directory < file)
        let stripped = names.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        let sorted = stripped.sorted {
            $0.split(separator: "/").map { Array($0.utf8) }.lexicographicallyPrecedes($1.split(separator: "/").map { Array($0.utf8) }) {
                $0.lexicographicallyPrecedes($1)
            }
        }
        #expect(stripped == sorted)
    }

    @Test func failedWriteLeavesNoFile() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        _ = try BagWriter.write(bagDirectory: fixture.bag, metadata: fixture.metadata)
        let refused = #expect(throws: CohortError.self) {
            _ = try ArchiveWriter.writePartial(
                bagDirectory: fixture.bag, to: fixture.archiveURL, createdAt: PackageFixture.createdAt, level: 6, faultAfterBytes: 100)
        }
        #expect(refused?.code == .system, "the injected write fault")
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.root.appendingPathComponent("out").path).isEmpty)
    }

    @Test func refusesToReplaceAnExistingArchive() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try Data("old".utf8).write(to: fixture.archiveURL)
        let refused = #expect(throws: CohortError.self) {
            _ = try ArchiveWriter.write(bagDirectory: fixture.bag, to: fixture.archiveURL, createdAt: PackageFixture.createdAt)
        }
        #expect(refused?.code == .conflict, "an existing archive is never replaced")
        #expect(try Data(contentsOf: fixture.archiveURL) == Data("old".utf8))
    }
}

extension ArchiveWriterTests {
    @Test func largeFileStreamsThroughManyChunks() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        // 1 MiB + 123 bytes of incompressible data: many 64 KiB chunks and a padded last block.
        let bytes = try SecureRandom.bytes(1_048_576 + 123)
        let url = fixture.bag.appendingPathComponent("data/blob.bin")
        try Data(bytes).write(to: url)
        try fixture.export()
        #expect(fixture.verify().passed)
        let out = fixture.root.appendingPathComponent("extract")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        #expect(try runTool("/usr/bin/tar", ["-xzf", fixture.archiveURL.path, "-C", out.path]).status == 0)
        let extracted = try Data(contentsOf: out.appendingPathComponent("\(fixture.bagName)/data/blob.bin"))
        #expect([UInt8](extracted) == bytes)
    }
}
