import CohortCore
import Foundation
import Testing

@testable import CohortDeid

/// The scan's JSON walk (issue 28, sixth round: strings ended by `memchr` and the run of
/// backslashes before a quote, the key path in ``JSONKeyStack``, key classes from reference-free
/// heads) against the walk as it was before, written here plainly over `String`s: a stack of
/// containers and their keys, a string ended by walking it byte by byte (a backslash skips the
/// byte after it), fixed fields and free-text paths by the `String` rules. Both walks match each
/// value with the same roster, so a value found, counted, named, taken as free text or skipped
/// differently shows in the hits or the counts.
struct ResidualScannerJSONWalkTests {
    /// The pre-sixth-round walk, by its own route.
    struct ReferenceWalk {
        let scanner: ResidualScanner
        let ndjson: Bool
        var containers: [(isObject: Bool, key: [UInt8])] = []
        var expectKey = false
        var hits: [String] = []
        var values = 0
        var freeTextValues = 0
        var workspace = LineWorkspace()

        mutating func line(_ number: Int, _ bytes: [UInt8]) {
            if ndjson {
                containers = []
                expectKey = false
            }
            let n = bytes.count
            var i = 0
            while i < n {
                switch bytes[i] {
                case UInt8(ascii: "{"):
                    containers.append((true, []))
                    expectKey = true
                case UInt8(ascii: "["):
                    containers.append((false, []))
                    expectKey = false
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    if !containers.isEmpty { containers.removeLast() }
                    expectKey = false
                case UInt8(ascii: ","):
                    expectKey = containers.last?.isObject ?? false
                case UInt8(ascii: ":"):
                    expectKey = false
                case UInt8(ascii: "\""):
                    var j = i + 1
                    while j < n, bytes[j] != UInt8(ascii: "\"") { j += bytes[j] == UInt8(ascii: "\\") ? 2 : 1 }
                    let raw = Array(bytes[(i + 1)..<min(j, n)])
                    if expectKey, containers.last?.isObject == true {
                        containers[containers.count - 1].key = raw
                    } else if !raw.isEmpty, !isFixed() {
                        value(raw, number)
                    }
                    i = j
                default: break
                }
                i += 1
            }
        }

        var keys: [String] { containers.map(\.key).filter { !$0.isEmpty }.map { String(decoding: $0, as: UTF8.self) } }

        func isFixed() -> Bool {
            guard let last = keys.last else { return false }
            return ResidualScanner.fixedJSONKeys.contains(last) || (last == "display" && keys.contains("coding"))
        }

        mutating func value(_ raw: [UInt8], _ number: Int) {
            let path = keys.joined(separator: ".")
            let freeText = ResidualScanner.isFreeTextJSONPath(path)
            values += 1
            if freeText { freeTextValues += 1 }
            let mask = raw.withUnsafeBufferPointer { scanner.kindMask(utf8: $0, isJSON: true, freeText: freeText, &workspace) }
            if mask != 0 {
                hits.append("\(number):\(mask):\(path):\(raw.withUnsafeBufferPointer { ResidualScanner.ValueScanner.jsonStringSHA256($0) })")
            }
        }
    }

    static let keys = [
        "note", "text", "valueString", "medicationCodeableConcept", "display", "coding", "code", "system", "unit", "id", "status",
        "resourceType", "reference", "device", "source", "effectiveDateTime", "div", "a.note", "note.text", "x.", "", "é", "NOTE",
        "codé", "resourceTypé", "value\\\"String", "te\\\\xt", "\\u006eote", "display\\\\",
    ]

    /// Content for a string: generated text (planted identifiers, non-ASCII, escapes) or runs of
    /// backslashes and quotes, the corpus's notes when given.
    static func stringContent(_ g: inout ScanTextGenerator, corpus: [String]) -> String {
        switch g.number(0...10) {
        case 10: return ResidualScannerDigitWordTests.digitValue(&g)  // digit-led words (the shortcut)
        case 0...4:
            let escaped = g.jsonEscaped(g.line())
            return String(escaped.dropFirst(9).dropLast(2))  // `{"note":"…"}` less its frame
        case 5: return String(repeating: "\\", count: g.number(1...5)) + g.pick(["\"", "n", "u00e9", "", "\\"]) + g.line()
        case 6 where !corpus.isEmpty: return ResidualScannerJSONWalkTests.escape(g.pick(corpus))
        case 7: return g.pick(keys)
        default: return g.line().replacingOccurrences(of: "\\", with: "").replacingOccurrences(of: "\"", with: "")
        }
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\r", with: "\\r")
    }

    /// A random JSON value, nested up to `depth`.
    static func value(_ g: inout ScanTextGenerator, depth: Int, corpus: [String]) -> String {
        switch depth > 0 ? g.number(0...5) : g.number(3...5) {
        case 0, 1:
            let members = (0..<g.number(0...4)).map { _ in
                "\"\(g.pick(keys))\"" + g.pick([":", ": ", ":"]) + value(&g, depth: depth - 1, corpus: corpus)
            }
            return "{" + members.joined(separator: g.pick([",", ", "])) + "}"
        case 2: return "[" + (0..<g.number(0...3)).map { _ in value(&g, depth: depth - 1, corpus: corpus) }.joined(separator: ",") + "]"
        case 3: return g.pick(["12", "-3.5e2", "true", "null", "0"])
        default: return "\"" + stringContent(&g, corpus: corpus) + "\""
        }
    }

    /// A FHIR Observation as the export writes it, with generated text in its values.
    static func observation(_ g: inout ScanTextGenerator, corpus: [String]) -> String {
        func s() -> String { stringContent(&g, corpus: corpus) }
        return #"{"category":[{"coding":[{"code":"vital-signs","display":"\#(s())","system":"http://x"}]}],"code":{"coding":[{"code":"8867-4","display":"\#(s())","system":"http://loinc.org"}]},"device":{"display":"\#(s())"},"effectiveDateTime":"\#(s())","id":"\#(s())","note":[{"text":"\#(s())"}],"resourceType":"Observation","status":"final","subject":{"reference":"Patient/\#(s())"},"text":{"div":"<div xmlns=\"http://www.w3.org/1999/xhtml\">\#(s())</div>","status":"generated"},"valueString":"\#(s())","valueQuantity":{"code":"/min","unit":"\#(s())","value":77}}"#
    }

    /// Lines: well-formed values, Observations, and either mutated (a structural byte, quote or
    /// backslash inserted or dropped, the line cut short).
    static func lines(seed: UInt64, count: Int, roster: [Participant], corpus: [String]) -> [[UInt8]] {
        var g = ScanTextGenerator(roster: roster, seed: seed)
        return (0..<count).map { _ in
            var bytes = Array((g.chance(30) ? observation(&g, corpus: corpus) : value(&g, depth: 4, corpus: corpus)).utf8)
            if g.chance(30), !bytes.isEmpty {
                for _ in 0..<g.number(1...3) {
                    let at = g.number(0...(bytes.count - 1))
                    switch g.number(0...2) {
                    case 0: bytes.insert(g.pick(Array(#"{}[],:"\"#.utf8)), at: at)
                    case 1: bytes.remove(at: at)
                    default: bytes.removeSubrange(at...)
                    }
                    if bytes.isEmpty { break }
                }
            }
            return bytes
        }
    }

    /// The shared deid corpus's lines (notes and cells), or none when it is not beside the
    /// repository (a failure in CI).
    static func corpusLines() -> [String] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/deid-corpus")
        let files = ["symptoms.csv", "medications.csv", "consents.csv"].map { root.appendingPathComponent($0) }
        let texts = files.compactMap { try? String(contentsOf: $0, encoding: .utf8) }
        if texts.isEmpty, ProcessInfo.processInfo.environment["CI"] == "true" {
            Issue.record("../shared/deid-corpus is missing: the JSON walk is not compared on its notes")
        }
        return texts.flatMap { $0.split(whereSeparator: \.isNewline).map(String.init) }
    }

    @Test(arguments: [(1 as UInt64, true), (2, true), (3, false), (4, false)])
    func theWalkFindsWhatThePlainWalkFinds(seed: UInt64, ndjson: Bool) {
        let roster = PlantedRoster.participants + Fixtures.roster(count: 40, seed: 5)
        let scanner = ResidualScanner(roster: roster, threads: 1)
        let corpus = Self.corpusLines()
        let lines = Self.lines(seed: seed, count: 3_000, roster: roster, corpus: corpus)
        var reference = ReferenceWalk(scanner: scanner, ndjson: ndjson)
        var walk = ResidualScanner.ValueScanner(scanner: scanner, format: ndjson ? .ndjson : .json)
        var hits: [String] = []
        for (index, line) in lines.enumerated() {
            reference.line(index + 1, line)
            line.withUnsafeBufferPointer { bytes in
                walk.line(index + 1, bytes) { hits.append("\($0.line):\($0.mask):\($0.field ?? "-"):\($0.sha256)") }
            }
        }
        #expect(hits == reference.hits)
        #expect(walk.values == reference.values)
        #expect(walk.freeTextValues == reference.freeTextValues)
        // The comparison has something to compare: many values, hits and free-text values.
        #expect(reference.values > 5_000)
        #expect(reference.hits.count > 1_000)
        #expect(reference.freeTextValues > 1_000)
    }

    /// The string's end on its own: every placement of quotes and backslashes in short strings.
    @Test func stringEndMatchesTheByteWalk() {
        let alphabet: [UInt8] = Array(#""\a"#.utf8)
        for length in 0...6 {
            var total = 1
            for _ in 0..<length { total *= alphabet.count }
            for code in 0..<total {
                var bytes: [UInt8] = [], c = code
                for _ in 0..<length {
                    bytes.append(alphabet[c % alphabet.count])
                    c /= alphabet.count
                }
                for start in 0...bytes.count {
                    var j = start
                    while j < bytes.count, bytes[j] != 0x22 { j += bytes[j] == 0x5C ? 2 : 1 }
                    let expected = min(j, bytes.count)
                    let found = bytes.withUnsafeBufferPointer { b in
                        b.baseAddress.map { ResidualScanner.ValueScanner.stringEnd($0, from: start, count: b.count) } ?? 0
                    }
                    #expect(found == expected, "\(String(decoding: bytes, as: UTF8.self).debugDescription) from \(start)")
                }
            }
        }
    }
}
