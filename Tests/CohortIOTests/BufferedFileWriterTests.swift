import CohortCore
import Foundation
import Synchronization
import Testing

@testable import CohortIO

struct BufferedFileWriterTests {
    /// Small slices, constants, strings and writes larger than the buffer all land in order.
    @Test func writesEverythingInOrder() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-bfw-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: url) }
        let writer = try BufferedFileWriter(url: url, relativePath: "data/test.bin")
        var expected: [UInt8] = []
        var generator = SeededRandom(seed: 9)
        for round in 0..<3000 {
            let size = round % 500 == 0 ? BufferedFileWriter.capacity + Int.random(in: 0...10, using: &generator) : Int.random(in: 0...200, using: &generator)
            let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
            switch round % 3 {
            case 0: try writer.write(bytes)
            case 1: try writer.write(Data(bytes))
            default:
                try writer.write("é,")
                expected += Array("é,".utf8)
                try writer.write(bytes)
            }
            expected += bytes
        }
        try writer.write(StaticString("end\n"))
        expected += Array("end\n".utf8)
        #expect(writer.bytesWritten == expected.count)
        try writer.close()
        try writer.close()
        #expect(Array(try Data(contentsOf: url)) == expected)
        let refused = #expect(throws: CohortError.self) { try writer.write([1]) }
        #expect(refused?.code == .system, "a write after close")
    }

    /// A tap that keeps what it sees.
    final class KeepingTap: FileWriteTap, @unchecked Sendable {
        var bytes: [UInt8] = []
        var identity: FileIdentity?
        func wrote(_ bytes: UnsafeRawBufferPointer) { self.bytes += bytes }
        func closed(identity: FileIdentity) { self.identity = identity }
    }

    /// A file the taps say is written to them alone gets no file on disk: its tap sees every byte,
    /// in order, and is closed with the tap-only identity of its size, which no file on disk has.
    /// A tapped file the predicate declines, and a file with no tap whatever the predicate says,
    /// are written to disk as before.
    @Test func aFileWrittenToItsTapAloneHasNoCopyOnDisk() throws {
        try withTemporaryDirectory { folder in
            let taps = Mutex<[String: KeepingTap]>([:])
            let tapping = FileWriteTaps { path in
                guard path.hasPrefix("data/") else { return nil }
                let tap = KeepingTap()
                taps.withLock { $0[path] = tap }
                return tap
            }.withoutDiskCopy { path in path != "data/kept.csv" }
            var expected: [UInt8] = []
            let alone = try BufferedFileWriter(url: folder.appendingPathComponent("alone.csv"), relativePath: "data/alone.csv", taps: tapping)
            let kept = try BufferedFileWriter(url: folder.appendingPathComponent("kept.csv"), relativePath: "data/kept.csv", taps: tapping)
            let untapped = try BufferedFileWriter(url: folder.appendingPathComponent("plain.txt"), relativePath: "plain.txt", taps: tapping)
            #expect(alone.isTapOnly && !kept.isTapOnly && !untapped.isTapOnly)
            for round in 0..<500 {
                let bytes = (0..<(round % 7 == 0 ? BufferedFileWriter.capacity + round : round)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ round) }
                for writer in [alone, kept, untapped] { try writer.write(bytes) }
                expected += bytes
            }
            for writer in [alone, kept, untapped] { try writer.close() }
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("alone.csv").path))
            #expect(Array(try Data(contentsOf: folder.appendingPathComponent("kept.csv"))) == expected)
            #expect(Array(try Data(contentsOf: folder.appendingPathComponent("plain.txt"))) == expected)
            let aloneTap = try #require(taps.withLock { $0["data/alone.csv"] })
            #expect(aloneTap.bytes == expected)
            let identity = try #require(aloneTap.identity)
            #expect(identity.isTapOnly && identity.byteCount == UInt64(expected.count))
            let keptIdentity = try #require(taps.withLock { $0["data/kept.csv"] }?.identity)
            #expect(!keptIdentity.isTapOnly && keptIdentity == FileIdentity(path: folder.appendingPathComponent("kept.csv").path))
            let refused = #expect(throws: CohortError.self) { try alone.write([1]) }
            #expect(refused?.code == .system, "a write after close")
        }
    }
}
