import Foundation
import Testing

import CohortCore
@testable import CohortIO

struct LineReaderTests {
    static func lines(_ bytes: [UInt8], max: Int) throws -> [[UInt8]] {
        try withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("input.ndjson")
            try Data(bytes).write(to: url)
            var lines: [[UInt8]] = []
            try LineReader.forEachLine(of: url, maxLineBytes: max) { _, line in lines.append(Array(line)) }
            return lines
        }
    }

    @Test func linesUpToTheCapAreReadAndCRLFDoesNotCount() throws {
        let atCap = [UInt8](repeating: 0x61, count: 100)
        #expect(try Self.lines(atCap + [0x0A] + atCap + [0x0D, 0x0A] + atCap, max: 100) == [atCap, atCap, atCap])
    }

    @Test func aLongerLineIsRefusedNamingItsNumberNotItsBytes() throws {
        let short = Array("{\"a\":1}\n".utf8)
        for tail in [[UInt8](), [0x0A]] {
            let error = #expect(throws: CohortError.self) {
                _ = try Self.lines(short + [UInt8](repeating: 0x5A, count: 101) + tail, max: 100)
            }
            #expect(error?.location?.line == 2)
            #expect(error?.message == "the line is longer than 100 bytes")
            #expect(error?.description.contains("ZZZ") == false)
        }
    }

    @Test func aLineWithoutEndLongerThanTheBufferStopsAtTheCap() throws {
        // 3 MiB without a line end, cap 1 MiB: refused once the cap is passed, not at the end.
        let error = #expect(throws: CohortError.self) {
            _ = try Self.lines([UInt8](repeating: 0x41, count: 3 << 20), max: 1 << 20)
        }
        #expect(error?.message == "the line is longer than 1 MiB" && error?.location?.line == 1)
    }
}
