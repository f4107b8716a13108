import CohortCore
import CohortCrypto
import CohortCompression
import Foundation
import Testing

@testable import CohortPackage

struct TarReaderTests {
    private func tarBytes(_ build: (TarWriter) throws -> Void) throws -> [UInt8] {
        var bytes: [UInt8] = []
        let writer = TarWriter(modificationTime: 1_700_000_000) { bytes.append(contentsOf: $0) }
        try build(writer)
        return bytes
    }

    private func entries(_ bytes: [UInt8]) throws -> [(String, [UInt8])] {
        var offset = 0
        let reader = TarReader { buffer in
            let count = min(buffer.count, bytes.count - offset, 700)  // odd chunk size on purpose
            bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + count)])) }
            offset += count
            return count
        }
        var result: [(String, [UInt8])] = []
        while let entry = try reader.next() {
            var content: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 100)
            while true {
                let count = try chunk.withUnsafeMutableBytes { try reader.read(into: $0) }
                if count == 0 { break }
                content += chunk[0..<count]
            }
            result.append((entry.path, content))
        }
        return result
    }

    @Test func readsBackWhatTheWriterWrote() throws {
        let long = "bag/" + String(repeating: "d", count: 120) + "/ü.csv"
        let content = [UInt8]((0..<1500).map { UInt8($0 % 251) })
        let bytes = try tarBytes {
            try $0.addDirectory(path: "bag")
            try $0.addFile(path: long, bytes: content)
            try $0.addFile(path: "bag/empty.txt", bytes: [])
            try $0.finish()
        }
        let read = try entries(bytes)
        #expect(read.map(\.0) == ["bag", long, "bag/empty.txt"])
        #expect(read[1].1 == content)
        #expect(read[2].1.isEmpty)
    }

    @Test func corruptHeaderChecksumIsAnError() throws {
        var bytes = try tarBytes {
            try $0.addFile(path: "bag/a.txt", bytes: Array("hello".utf8))
            try $0.finish()
        }
        bytes[0] = UInt8(ascii: "c")  // name changed, checksum not updated
        #expect(throws: CohortError.self) { _ = try entries(bytes) }
    }

    @Test func missingEndBlocksAreAnError() throws {
        let bytes = try tarBytes {
            try $0.addFile(path: "bag/a.txt", bytes: Array("hello".utf8))
            try $0.finish()
        }
        #expect(throws: CohortError.self) { _ = try entries(Array(bytes.dropLast(1024))) }
        #expect(throws: CohortError.self) { _ = try entries(Array(bytes.dropLast(512))) }
    }

    @Test func brokenTarInsideValidGzipIsNamedByTheVerifier() throws {
        let fixture = try PackageFixture()
        defer { fixture.cleanUp() }
        try fixture.export()
        var tar: [UInt8] = []
        try ArchiveWriter.writeTar(bagDirectory: fixture.bag, createdAt: PackageFixture.createdAt) { tar.append(contentsOf: $0) }
        tar.removeLast(1024)  // no end-of-archive marker
        let gzip = try GzipWriter.compress(tar)
        try Data(gzip).write(to: fixture.archiveURL)
        try fixture.resign { $0.archive = .init(fileName: fixture.archiveURL.lastPathComponent, sha256: SHA256.hex(gzip), size: UInt64(gzip.count)) }
        let report = fixture.verify()
        #expect(report.check(named: VerificationCheck.gzipIntegrity)?.passed == true)
        #expect(report.failedChecks == [VerificationCheck.tarStructure])
    }
}
