import CohortCore
import Foundation
import Testing

@testable import CohortExport

struct JSONTextTests {
    /// JSONEncoder's string (with `.withoutEscapingSlashes`) is the reference.
    private func encoded(_ text: String) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return String(decoding: try encoder.encode([text]), as: UTF8.self).dropFirst().dropLast().description
    }

    /// Escapes at every position around the eight-byte word boundaries, next to non-ASCII bytes.
    @Test func escapesAtEveryPositionMatchJSONEncoder() throws {
        let specials: [Character] = ["\"", "\\", "\n", "\u{01}", "\u{1F}", "\t", "é", "/", " ", "\u{7F}"]
        for length in 0..<20 {
            for position in 0..<max(length, 1) {
                for special in specials {
                    var characters = Array(repeating: Character("a"), count: length)
                    if position < length { characters[position] = special }
                    let text = String(characters)
                    var bytes: [UInt8] = []
                    JSONText.appendString(text, to: &bytes)
                    #expect(String(decoding: bytes, as: UTF8.self) == (try encoded(text)), "\(text.debugDescription)")
                    #expect(JSONText.string(text) == (try encoded(text)))
                }
            }
        }
    }

    @Test func randomStringsMatchJSONEncoder() throws {
        var generator = SeededRandom(seed: 11)
        let alphabet = Array("ab \"\\\n\r\t\u{00}\u{08}\u{0C}\u{1B}ü東🙂/{}:,".unicodeScalars)
        for _ in 0..<2000 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...40, using: &generator) {
                scalars.append(alphabet[Int.random(in: 0..<alphabet.count, using: &generator)])
            }
            let text = String(scalars)
            var bytes: [UInt8] = []
            JSONText.appendString(text, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == (try encoded(text)))
        }
    }
}
