import CohortCore
import Foundation
import Testing

@testable import CohortDeid

/// The word lists' hash table against a plain `Set<String>`: every way in (strings, bytes with
/// the tokenizer's hash), keys that make it grow, keys on the length limit and past it, keys that
/// are not ASCII, and near misses of every key.
struct WordTableTests {
    /// Keys from a seeded generator: short and long ASCII words, 255/256/1,000-byte keys, non-ASCII.
    static func keys(seed: UInt64) -> [String] {
        var random = SeededRandom(seed: seed)
        let letters = Array("abcdefghijklmnopqrstuvwxyz'-".utf8)
        var keys: [String] = []
        for _ in 0..<6_000 {
            let count = Int.random(in: 1...14, using: &random)
            keys.append(String(decoding: (0..<count).map { _ in letters[Int.random(in: 0..<letters.count, using: &random)] }, as: UTF8.self))
        }
        for count in [254, 255, 256, 257, 1_000] {
            keys.append(String(repeating: "a", count: count - 1) + "z")
        }
        keys += ["café", "naïve", "straße", "ǆ"]
        return keys
    }

    /// Near misses: a byte changed, one dropped, one added, the case changed.
    static func misses(of key: String) -> [String] {
        let utf8 = Array(key.utf8)
        var out: [String] = [key + "s", "x" + key, key.uppercased()]
        if utf8.count > 1 { out.append(String(decoding: utf8.dropLast(), as: UTF8.self)) }
        if let first = utf8.first, first < 0x80 {
            out.append(String(decoding: [first == 0x61 ? 0x62 : 0x61] + utf8.dropFirst(), as: UTF8.self))
        }
        return out
    }

    @Test(arguments: [1, 64, 20_000])
    func answersAsASetDoes(capacity: Int) {
        let keys = Self.keys(seed: UInt64(capacity))
        let oracle = Set(keys)
        var table = WordTable(capacity: capacity)
        for key in keys { table.insert(key) }
        for key in keys.prefix(500) { table.insert(key) }  // again: no duplicate
        #expect(table.count == oracle.count)
        #expect(Set(table.keys) == oracle && table.keys.count == oracle.count)
        for key in keys + keys.flatMap(Self.misses) {
            let expected = oracle.contains(key)
            #expect(table.contains(key) == expected, "\(key.prefix(20))… (\(key.utf8.count) bytes)")
            guard key.utf8.allSatisfy({ $0 < 0x80 }) else { continue }
            let bytes = Array(key.utf8)
            let hash = TextTokenizer.hash(asciiKey: bytes)
            #expect(bytes.withUnsafeBufferPointer { table.contains(hash: hash, bytes: $0) } == expected)
            #expect(table.contains(hash: hash, key: key) == expected)
            #expect(table.contains(ascii: bytes) == expected)
        }
    }
}
