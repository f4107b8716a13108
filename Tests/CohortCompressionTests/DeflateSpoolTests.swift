import CohortCore
import CohortIO
import Foundation
import Testing

@testable import CohortCompression

/// Files deflated as they are written, then put into a gzip stream as they are: the stream must
/// inflate to exactly what writing every byte through the gzip writer gives, whatever the writes'
/// sizes, the thread counts and the bytes around the files.
@Suite struct DeflateSpoolTests {
    /// One file: its bytes and the sizes it is written in.
    struct FileSpec {
        let path: String
        let bytes: [UInt8]
        let writes: [Int]
    }

    /// Files of text (rows repeating within a few KiB and across writes), random bytes, a file
    /// written in one large piece over several blocks, tiny writes, and an empty file.
    static func files(seed: UInt64) throws -> [FileSpec] {
        var random = SeededRandom(seed: seed)
        let text = ParallelGzipFixtures.text(700_000)
        let noise = (0..<200_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        func cuts(_ total: Int, _ range: ClosedRange<Int>) -> [Int] {
            var sizes: [Int] = []
            var left = total
            while left > 0 {
                let size = min(left, Int.random(in: range, using: &random))
                sizes.append(size)
                left -= size
            }
            return sizes
        }
        return [
            FileSpec(path: "data/csv/a.csv", bytes: text, writes: cuts(text.count, 1...90_000)),
            FileSpec(path: "data/json/b.ndjson", bytes: noise, writes: cuts(noise.count, 60_000...70_000)),
            FileSpec(path: "data/csv/c.csv", bytes: text + noise, writes: [text.count + noise.count]),
            FileSpec(path: "data/csv/d.csv", bytes: Array(text.prefix(5_000)), writes: cuts(5_000, 1...40)),
            FileSpec(path: "data/csv/empty.csv", bytes: [], writes: []),
        ]
    }

    /// Writes `files` through tapped file writers (interleaved, as the export's table writer
    /// writes its tables), into `directory/bag/…`, returning each file's path on disk.
    static func write(_ files: [FileSpec], into directory: URL, spool: DeflateSpool) throws -> [String] {
        var writers: [BufferedFileWriter] = []
        var paths: [String] = []
        for file in files {
            let url = directory.appendingPathComponent("bag").appendingPathComponent(file.path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            writers.append(try BufferedFileWriter(url: url, relativePath: file.path, taps: spool.taps))
            paths.append(url.path)
        }
        var offsets = Array(repeating: 0, count: files.count)
        var next = Array(repeating: 0, count: files.count)
        var busy = true
        while busy {
            busy = false
            for index in files.indices where next[index] < files[index].writes.count {
                busy = true
                let size = files[index].writes[next[index]]
                try writers[index].write(Array(files[index].bytes[offsets[index]..<(offsets[index] + size)]))
                offsets[index] += size
                next[index] += 1
            }
        }
        for writer in writers { try writer.close() }
        return paths
    }

    /// A gzip stream of: a prefix, then each file (from the spool when it has it, else written
    /// plainly) with a few bytes between, then a suffix.
    static func stream(_ files: [FileSpec], paths: [String], spool: DeflateSpool, threads: Int) throws -> (gzip: [UInt8], plain: [UInt8], spooled: Int) {
        var output: [UInt8] = []
        var plain: [UInt8] = []
        var spooled = 0
        let gzip = try GzipWriter(level: 6, threads: threads) { output.append(contentsOf: $0) }
        func plainly(_ bytes: [UInt8]) throws {
            try gzip.write(bytes)
            plain += bytes
        }
        try plainly(ParallelGzipFixtures.text(150_000))
        for (file, path) in zip(files, paths) {
            try plainly(Array("header of \(file.path)\n".utf8))
            if let deflated = spool.deflated(file.path, identity: FileIdentity(path: path)) {
                try gzip.writePrecompressed(deflated)
                plain += file.bytes
                spooled += 1
            } else {
                try plainly(file.bytes)
            }
        }
        try plainly(ParallelGzipFixtures.text(3_000))
        try gzip.finish()
        return (output, plain, spooled)
    }

    /// Files of `seed` written through a spool of `threads` threads in `directory`, the spool
    /// finished: the files, the spool and the files' paths on disk.
    static func written(seed: UInt64, threads: Int, in directory: URL) throws -> (files: [FileSpec], spool: DeflateSpool, paths: [String]) {
        let files = try Self.files(seed: seed)
        let spool = try DeflateSpool(directory: directory.appendingPathComponent("spool"), level: 6, threads: threads)
        let paths = try Self.write(files, into: directory, spool: spool)
        spool.finishWriting()
        return (files, spool, paths)
    }

    /// Appends one byte to the file at `path`.
    static func appendByte(to path: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("x".utf8))
        try handle.close()
    }

    @Test(arguments: [(1, 1), (2, 1), (3, 4), (1, 3)])
    func spooledFilesInflateToWhatWasWritten(spoolThreads: Int, gzipThreads: Int) throws {
        try withTemporaryDirectory { directory in
            let (files, spool, paths) = try Self.written(seed: 28, threads: spoolThreads, in: directory)
            // Every non-empty file was deflated (the empty one is read as it is).
            #expect(spool.count == files.count - 1)
            let result = try Self.stream(files, paths: paths, spool: spool, threads: gzipThreads)
            #expect(result.spooled == files.count - 1)
            #expect(try GzipReader.decompress(result.gzip) == result.plain)
            if ParallelGzipFixtures.hasGzip, let stock = try ParallelGzipFixtures.stockGzipDecompress(result.gzip) {
                #expect(stock == result.plain)
            }
        }
    }

    @Test func theSpoolIsTheSameForAnyThreadCount() throws {
        let files = try Self.files(seed: 6)
        var spools: [[[UInt8]]] = []
        for threads in [1, 2, 5] {
            try withTemporaryDirectory { directory in
                let spool = try DeflateSpool(directory: directory.appendingPathComponent("spool"), level: 6, threads: threads)
                let paths = try Self.write(files, into: directory, spool: spool)
                spool.finishWriting()
                spools.append(
                    try zip(files, paths).compactMap { file, path in
                        try spool.deflated(file.path, identity: FileIdentity(path: path)).map { [UInt8](try Data(contentsOf: URL(fileURLWithPath: $0.spoolPath))) }
                    })
            }
        }
        #expect(spools.count == 3 && spools[0].count == files.count - 1)
        #expect(spools[1] == spools[0] && spools[2] == spools[0])
    }

    @Test func aFileTouchedAfterItsWriterClosedItIsReadAgain() throws {
        try withTemporaryDirectory { directory in
            let (files, spool, paths) = try Self.written(seed: 3, threads: 2, in: directory)
            #expect(spool.deflated(files[0].path, identity: FileIdentity(path: paths[0])) != nil)
            // Appended to: another size, another change time.
            try Self.appendByte(to: paths[0])
            #expect(spool.deflated(files[0].path, identity: FileIdentity(path: paths[0])) == nil)
            // Same content, but rewritten (and its time set, so the test does not rest on the
            // clock having moved): the identity differs, so it is not trusted.
            try Data(files[1].bytes).write(to: URL(fileURLWithPath: paths[1]))
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_000_000_000)], ofItemAtPath: paths[1])
            #expect(spool.deflated(files[1].path, identity: FileIdentity(path: paths[1])) == nil)
            #expect(spool.deflated("data/csv/not-written.csv", identity: FileIdentity(path: paths[2])) == nil)
            // And a stream built now reads those two from disk, still inflating to the files.
            let result = try Self.stream(files, paths: paths, spool: spool, threads: 2)
            #expect(result.spooled == files.count - 3)
        }
    }

    @Test func aSpoolFileThatChangedIsRefusedNotCopied() throws {
        try withTemporaryDirectory { directory in
            let (files, spool, paths) = try Self.written(seed: 9, threads: 2, in: directory)
            let deflated = try #require(spool.deflated(files[0].path, identity: FileIdentity(path: paths[0])))
            try Self.appendByte(to: deflated.spoolPath)
            let gzip = try GzipWriter(level: 6, threads: 1) { _ in }
            #expect(throws: CohortError.self) { try gzip.writePrecompressed(deflated) }
        }
    }

    @Test func removeDeletesTheSpool() throws {
        try withTemporaryDirectory { directory in
            let folder = directory.appendingPathComponent("spool")
            let spool = try DeflateSpool(directory: folder, level: 6, threads: 2)
            let paths = try Self.write(try Self.files(seed: 1), into: directory, spool: spool)
            #expect(spool.count > 0)
            spool.remove()
            #expect(!FileManager.default.fileExists(atPath: folder.path))
            #expect(spool.deflated("data/csv/a.csv", identity: FileIdentity(path: paths[0])) == nil)
        }
    }
}
