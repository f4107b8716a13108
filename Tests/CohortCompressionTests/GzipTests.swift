import Foundation
import Testing
import CohortCore
import CohortCompression

/// Test inputs: 1.5 MB of random bytes and ~2 MB of repetitive CSV-like text.
enum GzipFixtures {
    static func random() throws -> [UInt8] { try RandomBytes.bytes(1_500_000) }

    static func compressible() -> [UInt8] {
        var text = "participant,day,pain,stiffness\n"
        for row in 0..<60_000 { text += "p\(row % 97),2025-01-\(row % 28 + 1),\(row % 11),\(row % 7)\n" }
        return Array(text.utf8)
    }

    /// Compresses `input` feeding the writer in uneven chunks, as a streaming producer would.
    static func compressInChunks(_ input: [UInt8], level: Int = 6) throws -> [UInt8] {
        var output: [UInt8] = []
        let writer = try GzipWriter(level: level) { output.append(contentsOf: $0) }
        var offset = 0
        var size = 1
        while offset < input.count {
            let end = min(input.count, offset + size)
            try writer.write(Array(input[offset..<end]))
            offset = end
            size = size * 3 % 100_003 + 1
        }
        try writer.finish()
        return output
    }

    /// Decompresses with a small read buffer, so many `read` calls are needed.
    static func decompressInSmallReads(_ compressed: [UInt8]) throws -> [UInt8] {
        let reader = try GzipReader(bytes: compressed)
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1000)
        while true {
            let count = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
            if count == 0 { return result }
            result.append(contentsOf: buffer[0..<count])
        }
    }
}

struct GzipWriterTests {
    @Test func roundTripRandomData() throws {
        let input = try GzipFixtures.random()
        let compressed = try GzipFixtures.compressInChunks(input)
        #expect(try GzipFixtures.decompressInSmallReads(compressed) == input)
    }

    @Test func roundTripCompressibleData() throws {
        let input = GzipFixtures.compressible()
        let compressed = try GzipFixtures.compressInChunks(input)
        #expect(compressed.count < input.count / 4)
        #expect(try GzipReader.decompress(compressed) == input)
    }

    @Test(arguments: [0, 1, 6, 9])
    func outputIsReproducible(_ level: Int) throws {
        let input = GzipFixtures.compressible()
        let first = try GzipWriter.compress(input, level: level)
        let second = try GzipWriter.compress(input, level: level)
        #expect(first == second)
        // How the input was split into writes does not change the bytes either.
        #expect(try GzipFixtures.compressInChunks(input, level: level) == first)
        #expect(try GzipReader.decompress(first) == input)
    }

    @Test func headerHasNoTimestampOrName() throws {
        let compressed = try GzipWriter.compress(Array("x".utf8), level: 9)
        #expect(Array(compressed.prefix(10)) == [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255])
    }

    @Test func emptyInputIsAValidStream() throws {
        let compressed = try GzipWriter.compress([])
        #expect(try GzipReader.decompress(compressed) == [])
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/gzip")))
    func stockGzipAcceptsTheOutput() throws {
        try withTemporaryDirectory { directory in
            let input = GzipFixtures.compressible() + (try RandomBytes.bytes(200_000))
            let file = directory.appendingPathComponent("export.tar.gz")
            try Data(try GzipFixtures.compressInChunks(input)).write(to: file)
            let test = try runTool("/usr/bin/gzip", ["-t", file.path])
            #expect(test.status == 0, "gzip -t failed: \(test.errorText)")
            let decompressed = try runTool("/usr/bin/gzip", ["-dc", file.path])
            #expect(decompressed.status == 0)
            #expect(decompressed.output == input)
        }
    }

    @Test func levelOutOfRangeIsRejected() {
        let error = #expect(throws: CohortError.self) { try GzipWriter(level: 10) { _ in } }
        #expect(error?.code == .invalidInput)
    }

    @Test func writingAfterFinishIsAnError() throws {
        let writer = try GzipWriter { _ in }
        try writer.finish()
        #expect(throws: CohortError.self) { try writer.write([1]) }
        #expect(throws: CohortError.self) { try writer.finish() }
    }

    @Test func sinkErrorsPropagate() throws {
        struct DiskFull: Error {}
        var calls = 0
        let writer = try GzipWriter(level: 0) { _ in
            calls += 1
            if calls > 1 { throw DiskFull() }
        }
        #expect(throws: DiskFull.self) {
            try writer.write(try RandomBytes.bytes(200_000))
            try writer.finish()
        }
    }
}

struct GzipReaderTests {
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/gzip")))
    func readsStockGzipOutputFromAFile() throws {
        try withTemporaryDirectory { directory in
            let input = GzipFixtures.compressible()
            let plain = directory.appendingPathComponent("data.csv")
            try Data(input).write(to: plain)
            let result = try runTool("/usr/bin/gzip", ["-k", "-n", plain.path])
            try #require(result.status == 0)
            let reader = try GzipReader(contentsOf: directory.appendingPathComponent("data.csv.gz"))
            #expect(try reader.readAll() == input)
        }
    }

    @Test func truncatedStreamIsAnIntegrityError() throws {
        let compressed = try GzipWriter.compress(GzipFixtures.compressible())
        for cut in [4, 10, 20, compressed.count / 2, compressed.count - 8, compressed.count - 1] {
            let error = #expect(throws: CohortError.self, "cut at \(cut)") {
                try GzipReader.decompress(Array(compressed.prefix(cut)))
            }
            #expect(error?.code == .integrity)
        }
    }

    @Test func flippedByteIsAnIntegrityError() throws {
        let compressed = try GzipWriter.compress(try RandomBytes.bytes(100_000))
        // Body, CRC-32 trailer, and length trailer.
        for index in [compressed.count / 2, compressed.count - 6, compressed.count - 2] {
            var damaged = compressed
            damaged[index] ^= 0x10
            let error = #expect(throws: CohortError.self, "flip at \(index)") { try GzipReader.decompress(damaged) }
            #expect(error?.code == .integrity)
        }
    }

    @Test func concatenatedMembersAreReadInTurn() throws {
        let first = try GzipWriter.compress(Array("first,".utf8))
        let second = try GzipWriter.compress(Array("second".utf8))
        #expect(try GzipReader.decompress(first + second) == Array("first,second".utf8))
    }

    @Test func trailingGarbageAndEmptyInputAreRejected() throws {
        let compressed = try GzipWriter.compress(Array("data".utf8))
        #expect(throws: CohortError.self) { try GzipReader.decompress(compressed + [0x00, 0x01, 0x02]) }
        let error = #expect(throws: CohortError.self) { try GzipReader.decompress([]) }
        #expect(error?.code == .integrity)
        #expect(throws: CohortError.self) { try GzipReader.decompress(Array("not gzip at all".utf8)) }
    }

    @Test func missingFileIsNotFound() {
        let error = #expect(throws: CohortError.self) {
            try GzipReader(contentsOf: URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString).gz"))
        }
        #expect(error?.code == .notFound)
    }
}
