import CohortCore
import Foundation
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
}
