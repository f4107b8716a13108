import Testing

@testable import CohortExport

struct FHIRWriterTests {
    /// The plain definition: scan left to right, replace, continue after the match.
    private func reference(_ pattern: [UInt8], _ replacement: [UInt8], _ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if i + pattern.count <= bytes.count, Array(bytes[i..<(i + pattern.count)]) == pattern {
                out += replacement
                i += pattern.count
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return out
    }

    @Test(arguments: [
        ("ab", "XYZ", ""), ("ab", "XYZ", "ab"), ("ab", "XYZ", "abab"), ("ab", "", "xabyabz"), ("aa", "b", "aaa"),
        ("aa", "aaa", "aaaa"), ("abc", "Z", "ab"), ("x", "yy", "no match here"),
        ("\"reference\":\"urn:uuid:1\"", "\"reference\":\"Patient/1\"", "{\"subject\":{\"reference\":\"urn:uuid:1\"},\"x\":\"reference\"}"),
    ])
    func replacesEveryOccurrence(pattern: String, replacement: String, text: String) {
        var out: [UInt8] = [1, 2, 3]
        FHIRWriter.replace(Array(pattern.utf8), with: Array(replacement.utf8), in: Array(text.utf8), into: &out)
        #expect(out == reference(Array(pattern.utf8), Array(replacement.utf8), Array(text.utf8)))
    }

    @Test func replacesAcrossALongBuffer() {
        var generator = SeededGenerator(seed: 42)
        let pattern: [UInt8] = [1, 2, 1]
        for _ in 0..<200 {
            let bytes = (0..<Int.random(in: 0...300, using: &generator)).map { _ in UInt8.random(in: 0...2, using: &generator) }
            var out: [UInt8] = []
            FHIRWriter.replace(pattern, with: [9, 9], in: bytes, into: &out)
            #expect(out == reference(pattern, [9, 9], bytes))
        }
    }
}
