import Foundation
import Testing
import CohortCore
import CohortCompression

/// Inputs shaped around the parallel writer's block boundaries.
enum ParallelGzipFixtures {
    static let block = GzipWriter.blockSize
    static let gzipPath = "/usr/bin/gzip"
    static var hasGzip: Bool { FileManager.default.isExecutableFile(atPath: gzipPath) }

    /// Text with repeats both inside a block and across a block boundary, plus some noise.
    static func text(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 64)
        var row = 0
        while bytes.count < count {
            bytes += Array("{\"participant\":\"p\(row % 389)\",\"kind\":\"heart_rate\",\"value\":\(60 + row * 7 % 53)}\n".utf8)
            row += 1
        }
        return Array(bytes.prefix(count))
    }

    /// Compresses `input` with `threads` threads, writing in chunks that straddle block edges.
    static func compress(_ input: [UInt8], level: Int = 6, threads: Int) throws -> [UInt8] {
        var output: [UInt8] = []
        let writer = try GzipWriter(level: level, threads: threads) { output.append(contentsOf: $0) }
        var offset = 0
        while offset < input.count {
            let end = min(input.count, offset + 50_000)
            try writer.write(Array(input[offset..<end]))
            offset = end
        }
        try writer.finish()
        return output
    }

    /// Runs stock `gzip -t` and `gzip -dc` on `compressed`; returns what gzip decompressed.
    static func stockGzipDecompress(_ compressed: [UInt8]) throws -> [UInt8]? {
        try withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("data.gz")
            try Data(compressed).write(to: file)
            let test = try runTool(gzipPath, ["-t", file.path])
            guard test.status == 0 else {
                Issue.record("gzip -t failed: \(test.errorText)")
                return nil
            }
            let result = try runTool(gzipPath, ["-dc", file.path])
            return result.status == 0 ? result.output : nil
        }
    }
}

extension GzipWriterTests {
    @Test(arguments: [1, 6, 9])
    func outputIsTheSameForAnyThreadCount(_ level: Int) throws {
        let input = ParallelGzipFixtures.text(1_500_000) + (try RandomBytes.bytes(300_000))
        let single = try ParallelGzipFixtures.compress(input, level: level, threads: 1)
        for threads in [2, 4, 4, 7] {
            #expect(try ParallelGzipFixtures.compress(input, level: level, threads: threads) == single, "threads \(threads)")
        }
        #expect(try GzipWriter.compress(input, level: level) == single)
        #expect(try GzipReader.decompress(single) == input)
    }

    @Test(arguments: [
        0, 1, GzipWriter.blockSize - 1, GzipWriter.blockSize, GzipWriter.blockSize + 1,
        2 * GzipWriter.blockSize, 7 * GzipWriter.blockSize + 12_345,
    ])
    func blockBoundariesRoundTrip(_ count: Int) throws {
        let input = ParallelGzipFixtures.text(count)
        let compressed = try ParallelGzipFixtures.compress(input, threads: 3)
        #expect(try ParallelGzipFixtures.compress(input, threads: 1) == compressed)
        #expect(try GzipFixtures.decompressInSmallReads(compressed) == input)
        if ParallelGzipFixtures.hasGzip {
            #expect(try ParallelGzipFixtures.stockGzipDecompress(compressed) == input)
        }
    }

    @Test(.enabled(if: ParallelGzipFixtures.hasGzip, "stock gzip is not installed at /usr/bin/gzip"))
    func stockGzipReadsManyParallelBlocks() throws {
        let input = ParallelGzipFixtures.text(3_000_000)
        let compressed = try ParallelGzipFixtures.compress(input, level: 9, threads: 4)
        #expect(try ParallelGzipFixtures.stockGzipDecompress(compressed) == input)
    }

    @Test func incompressibleDataBarelyGrows() throws {
        let input = try RandomBytes.bytes(10 * GzipWriter.blockSize + 3)
        let compressed = try ParallelGzipFixtures.compress(input, threads: 4)
        #expect(compressed.count < input.count + input.count / 500 + 100)
        #expect(try GzipReader.decompress(compressed) == input)
        if ParallelGzipFixtures.hasGzip {
            #expect(try ParallelGzipFixtures.stockGzipDecompress(compressed) == input)
        }
    }

    @Test(.enabled(if: ParallelGzipFixtures.hasGzip, "stock gzip is not installed at /usr/bin/gzip"))
    func ratioStaysCloseToStockGzip() throws {
        let input = ParallelGzipFixtures.text(2_000_000)
        let ours = try ParallelGzipFixtures.compress(input, level: 6, threads: 2)
        let stock = try withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("data.json")
            try Data(input).write(to: file)
            return try runTool(ParallelGzipFixtures.gzipPath, ["-6", "-n", "-c", file.path]).output
        }
        try #require(!stock.isEmpty)
        // Priming each block with the previous block's tail keeps the cost of blocks small.
        #expect(Double(ours.count) <= Double(stock.count) * 1.03, "ours \(ours.count), gzip \(stock.count)")
    }

    @Test func outputStreamsBeforeFinish() throws {
        var received = 0
        let writer = try GzipWriter(level: 1, threads: 2) { received += $0.count }
        try writer.write(ParallelGzipFixtures.text(20 * GzipWriter.blockSize))
        // Only a bounded number of blocks may be held back; the rest already reached the sink.
        #expect(received > 1000)
        try writer.finish()
    }

    @Test(arguments: [1, 4])
    func sinkErrorDuringParallelWritePropagatesAndStops(_ threads: Int) throws {
        var calls = 0
        let writer = try GzipWriter(level: 6, threads: threads) { _ in
            calls += 1
            if calls > 2 { throw CohortError(.system, "disk full") }
        }
        let input = ParallelGzipFixtures.text(12 * GzipWriter.blockSize)
        let error = #expect(throws: CohortError.self) {
            try writer.write(input)
            try writer.finish()
        }
        #expect(error?.message == "disk full")
        let later = #expect(throws: CohortError.self) { try writer.write([1, 2, 3]) }
        #expect(later?.code == .system)
        #expect(throws: CohortError.self) { try writer.finish() }
    }

    @Test func abandonedWriterDoesNotHang() throws {
        var writer: GzipWriter? = try GzipWriter(threads: 4) { _ in }
        try writer?.write(ParallelGzipFixtures.text(9 * GzipWriter.blockSize))
        writer = nil
        // A fresh writer still works after the abandoned one's workers were told to stop.
        let input = ParallelGzipFixtures.text(3 * GzipWriter.blockSize)
        #expect(try GzipReader.decompress(try GzipWriter.compress(input, threads: 4)) == input)
    }

    @Test func zeroThreadsIsRejected() {
        let error = #expect(throws: CohortError.self) { try GzipWriter(threads: 0) { _ in } }
        #expect(error?.code == .invalidInput)
    }
}
