@testable import CohortPackage
import Foundation
import Testing

/// The consent check's NDJSON reader against `JSONSerialization`: what it accepts, Foundation
/// reads as the same object with the same bytes in every string; what Foundation refuses, it
/// refuses; and it refuses what parsers disagree on (a key twice) or a table row never holds.
struct FlatJSONObjectTests {
    private static func values(_ line: String, _ wanted: Set<String>) throws(FlatJSONObject.Refusal) -> [String: FlatJSONObject.Value] {
        let bytes = Array(line.utf8)
        return try bytes.withUnsafeBufferPointer { buffer throws(FlatJSONObject.Refusal) in try FlatJSONObject.values(buffer, wanted: wanted) }
    }

    @Test func readsARowOfTheExport() throws {
        let line = #"{"pseudonym":"CNLRBOQQID4BBYXB","kind":"heart_rate","start":"2025-12-30T18:30:00Z","end":null,"value":77,"unit":"/min","text":null,"source":"fitness-band","note":"caf\u00e9 \"x\" \ud83d\ude00"}"#
        let v = try Self.values(line, ["pseudonym", "start", "end", "value", "note", "absent"])
        #expect(v["pseudonym"] == .string("CNLRBOQQID4BBYXB"))
        #expect(v["start"] == .string("2025-12-30T18:30:00Z"))
        #expect(v["end"] == .null && v["value"] == .other && v["absent"] == nil)
        #expect(v["note"] == .string("café \"x\" 😀"))
        #expect(v["kind"] == nil, "a key not asked for is not kept")
        #expect(try Self.values(" { } ", ["a"]).isEmpty)
    }

    @Test(arguments: [
        (#"{"a":1,"a":2}"#, "each key once (a key appears twice)"),
        (#"{"a":"x","\u0061":"y"}"#, "each key once (a key appears twice)"),
        (#"{"a":{"b":1}}"#, "a flat object (a value is an object or an array)"),
        (#"{"a":[1]}"#, "a flat object (a value is an object or an array)"),
        (#"{"a":1}x"#, "nothing after the object's closing }"),
        (#"{"a":1,}"#, "a key in quotes"),
        (#"{'a':1}"#, "a key in quotes"),
        (#"{"a":01}"#, "a comma or the closing }"),
        (#"{"a":1.}"#, "a string, number, true, false or null as a value"),
        (#"{"a":.5}"#, "a string, number, true, false or null as a value"),
        (#"{"a":+1}"#, "a string, number, true, false or null as a value"),
        (#"{"a":NaN}"#, "a string, number, true, false or null as a value"),
        (#"{"a":tru}"#, "a string, number, true, false or null as a value"),
        (#"{"a":"\x"}"#, "a valid escape after a backslash"),
        (#"{"a":"\u12"}"#, "four hex digits after \\u"),
        (#"{"a":"\ud800"}"#, "no lone surrogate in a \\u escape"),
        (#"{"a":"\udc00"}"#, "no lone surrogate in a \\u escape"),
        (#"{"a":"\ud800\u0041"}"#, "no lone surrogate in a \\u escape"),
        ("{\"a\":\"tab\there\"}", "no control character inside a string (escape it)"),
        (#"{"a":"open}"#, "a closing quote"),
        (#"["a"]"#, "a JSON object starting with {"),
        ("\u{FEFF}{\"a\":1}", "a JSON object starting with {"),
    ])
    func refuses(line: String, reason: String) {
        #expect(throws: FlatJSONObject.Refusal(reason: reason)) { try Self.values(line, ["a"]) }
    }

    @Test func refusesBytesThatAreNotUTF8() {
        for bad: [UInt8] in [[0xFF], [0xC3], [0xED, 0xA0, 0x80], [0xC0, 0xAF]] {
            let line = Array(#"{"a":""#.utf8) + bad + Array(#""}"#.utf8)
            #expect(throws: FlatJSONObject.Refusal(reason: "UTF-8 text")) {
                try line.withUnsafeBufferPointer { buffer throws(FlatJSONObject.Refusal) in try FlatJSONObject.values(buffer, wanted: ["a"]) }
            }
        }
    }

    /// Generated flat objects, each also mutated by a byte: every unmutated one is read; whenever
    /// a line is read, Foundation reads it too, to the same values byte for byte.
    @Test func agreesWithJSONSerializationOnGeneratedLines() throws {
        var rng = SplitMix(seed: 0x5EED_C0DE)
        let keys = ["pseudonym", "start", "kind", "p\\u0073eudonym", "note", "\\u00e9t\\u00e9", "a b", ""]
        let wanted: Set<String> = ["pseudonym", "start", "kind", "note", "été", "a b", ""]
        var accepted = 0, mutatedAccepted = 0
        // One parser for every line, as a table is read: nothing of a line may leak into the next.
        let parser = FlatJSONObject.Parser(keys: Array(wanted))
        for round in 0..<3_000 {
            var pairs: [String] = []
            var used: Set<String> = []
            for _ in 0..<rng.next(upTo: 6) {
                let key = keys[rng.next(upTo: keys.count)]
                // Keys that decode to the same text count as one (the generator writes each once).
                let decoded = key.replacingOccurrences(of: "\\u0073", with: "s").replacingOccurrences(of: "\\u00e9", with: "é")
                guard used.insert(decoded).inserted else { continue }
                pairs.append(space(&rng) + "\"\(key)\"" + space(&rng) + ":" + space(&rng) + value(&rng) + space(&rng))
            }
            let line = space(&rng) + "{" + pairs.joined(separator: ",") + "}" + space(&rng)
            var bytes = Array(line.utf8)
            let mutated = round % 2 == 1
            if mutated {
                let at = rng.next(upTo: bytes.count + 1)
                let byte = UInt8(truncatingIfNeeded: rng.next(upTo: 256))
                switch rng.next(upTo: 3) {
                case 0 where at < bytes.count: bytes.remove(at: at)
                case 1 where at < bytes.count: bytes[at] = byte
                default: bytes.insert(byte, at: at)
                }
            }
            let read: Bool = (try? bytes.withUnsafeBufferPointer { buffer throws(FlatJSONObject.Refusal) in try parser.read(buffer) }) != nil
            let mine: [String: FlatJSONObject.Value]? =
                read ? Dictionary(uniqueKeysWithValues: zip(parser.keys, parser.values).compactMap { key, value in value.map { (key, $0) } }) : nil
            if !mutated { #expect(mine != nil, "a generated flat object is read: \(line)") }
            guard let mine else { continue }
            accepted += 1
            if mutated { mutatedAccepted += 1 }
            let reference = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
            guard let reference else {
                Issue.record("read, but Foundation refuses it: \(String(decoding: bytes, as: UTF8.self))")
                continue
            }
            for key in wanted {
                switch (mine[key], reference[key]) {
                case (nil, nil): break
                case (.string(let a)?, let b as String): #expect(Array(a.utf8) == Array(b.utf8), "\(key) in \(line)")
                case (.null?, is NSNull): break
                case (.other?, let b?) where b is NSNumber || b is Bool || b is Int || b is Double: break
                default: Issue.record("\(key): \(String(describing: mine[key])) against \(String(describing: reference[key])) in \(String(decoding: bytes, as: UTF8.self))")
                }
            }
        }
        #expect(accepted > 1_500 && mutatedAccepted > 50, "the mutations must leave some lines readable: \(accepted), \(mutatedAccepted)")
    }

    private func space(_ rng: inout SplitMix) -> String { ["", "", " ", "\t", " \r\n "][rng.next(upTo: 5)] }

    private func value(_ rng: inout SplitMix) -> String {
        switch rng.next(upTo: 6) {
        case 0: return "null"
        case 1: return rng.next(upTo: 2) == 0 ? "true" : "false"
        case 2:
            // Exponents of one digit: a mutation makes at most two, which Foundation reads.
            let forms = ["0", "-0", "77", "8.3", "-12.50", "1e5", "2.5E-3", "6e+2", "123456789012"]
            return forms[rng.next(upTo: forms.count)]
        default:
            let pieces = ["a", "Z", "9", " ", "é", "😀", "中", "\\n", "\\\"", "\\\\", "\\/", "\\t", "\\u00e9", "\\ud83d\\ude00", "\\u0000", "\\u001f", "2025-12-30T18:30:00Z"]
            return "\"" + (0..<rng.next(upTo: 8)).map { _ in pieces[rng.next(upTo: pieces.count)] }.joined() + "\""
        }
    }
}

extension FlatJSONObject {
    /// The values of `wanted` keys in one line, as a dictionary (the product reads a table's lines
    /// through one ``Parser``).
    static func values(_ line: UnsafeBufferPointer<UInt8>, wanted: Set<String>) throws(Refusal) -> [String: Value] {
        let parser = Parser(keys: Array(wanted))
        try parser.read(line)
        var result: [String: Value] = [:]
        for (key, value) in zip(parser.keys, parser.values) { if let value { result[key] = value } }
        return result
    }
}

/// A small deterministic generator (SplitMix64).
private struct SplitMix {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next(upTo bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return bound <= 0 ? 0 : Int(z % UInt64(bound))
    }
}
