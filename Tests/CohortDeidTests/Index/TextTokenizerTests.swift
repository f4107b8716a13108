import CohortCore
import Foundation
import Testing

@testable import CohortDeid

struct TextTokenizerTests {
    /// Words hash with one masked load for their last bytes; the hash must be the one the
    /// identifier index stores for the same key, whatever bytes follow the key in the buffer.
    @Test func paddedKeyHashEqualsTheKeyHash() {
        var g = SeededRandom(seed: 11)
        for count in 0..<40 {
            for _ in 0..<50 {
                let key = (0..<count).map { _ in UInt8.random(in: 0x30...0x7A, using: &g) }
                let buffer = key + (0..<8).map { _ in UInt8.random(in: 0...255, using: &g) }
                let padded = buffer.withUnsafeBufferPointer { b in b.baseAddress.map { TextTokenizer.hashKeyPadded($0, count) } }
                #expect(padded == TextTokenizer.hash(asciiKey: key), "\(key)")
            }
        }
    }
}
