import CohortCore
import Foundation
import Testing

@testable import CohortDeid

/// Plain ASCII JSON lines with escapes are unescaped and matched as bytes; these tests hold that
/// path to the reference scanner (and to what a user must see found), escape by escape.
struct ResidualScannerEscapeTests {
    static let roster = PlantedRoster.participants + Fixtures.roster(count: 40, seed: 5)

    /// ASCII lines with every kind of escape, in and next to identifiers of the planted roster.
    static let lines: [String] = [
        #"{"div":"<div xmlns=\"http://www.w3.org/1999/xhtml\">Garcia</div>"}"#,
        #"{"div":"<div xmlns=\"http://www.w3.org/1999/xhtml\">Heart rate</div>","status":"generated"}"#,
        #"{"n":"Jos\u00e9 Garc\u00eda"}"#, #"{"n":"Jos\u00E9 Garcia"}"#, #"{"n":"Jos\u00e9"}"#, #"{"n":"Garc\u00eda's"}"#,
        #"{"n":"Jose \"Kiki\" Garcia"}"#, #"{"n":"Jose\"Garcia"}"#, #"{"n":"Garc\"ia"}"#, #"{"n":"\"Garcia\""}"#,
        #"{"n":"Jose\\Garcia"}"#, #"{"n":"Jose\\\"Garcia"}"#, #"{"n":"Jose\/Garcia"}"#, #"{"n":"O\u0027Brien"}"#, #"{"n":"O\'Brien"}"#,
        #"{"e":"jose.garcia@example.org"}"#, #"{"e":"jose.garcia@example\/org"}"#, #"{"e":"mailto:\/\/jose.garcia@example.org\/"}"#,
        #"{"e":"jose\u002egarcia\u0040example\u002Eorg"}"#, #"{"e":"jose.garcia@exa\"mple.org"}"#,
        #"{"p":"555\u002d123\u002d4567"}"#, #"{"p":"(555) 123\u002D4567"}"#, #"{"p":"555\/123\/4567"}"#, #"{"p":"555\n123\n4567"}"#,
        #"{"p":"555\u12123-4567"}"#, #"{"p":"555\u0031234567"}"#, #"{"p":"\u0035\u0035\u0035-987-6543"}"#,
        #"{"d":"03\/14\/1980"}"#, #"{"d":"1980\u002d03\u002d14T00:00"}"#, #"{"d":"14\u002E03\u002E1980"}"#,
        #"{"m":"\u00411234567"}"#, #"{"m":"A\u0031234567"}"#, #"{"c":"P\u002d0001"}"#, #"{"c":"P\"-0001"}"#,
        #"{"a":"45 Elm\tAvenue"}"#, #"{"a":"45\u0020Elm Avenue"}"#, #"{"a":"123 Main\/St"}"#,
        #"{"n":"Jose\nGarcia"}"#, #"{"n":"Jose\r\nGarcia"}"#, #"{"n":"Jose\bGarcia\f"}"#, #"{"n":"Jose\u000aGarcia"}"#,
        #"{"n":"Garcia\u12 O'Brien"}"#, #"{"n":"Garcia\u"}"#, #"{"n":"Garcia\u004"}"#, #"{"n":"\uZZZZGarcia"}"#, #"{"n":"\u00G1"}"#,
        #"{"n":"Garcia \ud83d\ude00 O'Brien"}"#, #"{"n":"\ud83dGarcia"}"#, #"{"n":"\udc00Garcia"}"#, #"{"n":"Jose\ud83d\u0041Garcia"}"#,
        #"{"n":"Jose\uDBFF\uDFFFGarcia"}"#, #"{"n":"Garcia\ud83d\ude0"}"#, #"{"n":"Garcia\ud83d\"#,
        #"{"n":"[NAME] \u005bNAME\u005d Garcia"}"#, #"{"n":"\u005BNAME] Jose"}"#, #"{"n":"Katherine Smith\u002dJones"}"#,
        #"{"x":"\u0000Garcia\u007f"}"#, #"{"x":"\\\\\\"}"#, #"Garcia \"#, #"\"#, #"\\"#, #"\u"#, #"\u0041"#, #"\ud83d"#,
        #"{"d":"José's Apple\u0020Watch"}"#,
    ]

    @Test(arguments: lines)
    func escapedLinesMatchTheReferenceScanner(line: String) {
        let scanner = ResidualScanner(roster: Self.roster)
        let reference = ReferenceScanner(roster: Self.roster)
        #expect(scanner.kinds(inLine: line, isJSON: true) == reference.kinds(inLine: line, isJSON: true))
        #expect(scanner.kinds(inLine: line, isJSON: false) == reference.kinds(inLine: line, isJSON: false))
    }

    /// Escaped identifiers a reader of the export would see decoded are found.
    @Test(arguments: [
        (#"{"n":"Jos\u00e9 Garc\u00eda"}"#, IdentifierKind.name), (#"{"n":"Jos\u00e9 \"Kiki\" Garc\u00eda"}"#, .name),
        (#"{"n":"Garc\u00eda\u0027s knee"}"#, .name), (#"{"e":"jose\u002egarcia@example.org"}"#, .email),
        (#"{"p":"555\u002d123\u002d4567"}"#, .phone), (#"{"p":"(555)\n123-4567"}"#, .phone), (#"{"d":"03\/14\/1980"}"#, .birthDate),
        (#"{"m":"\u00411234567"}"#, .mrn), (#"{"c":"P\u002d0001"}"#, .code), (#"{"a":"45 Elm\u0020Avenue Apt 2"}"#, .address),
    ])
    func escapedIdentifiersAreFound(line: String, kind: IdentifierKind) {
        let scanner = ResidualScanner(roster: Self.roster)
        #expect(scanner.kinds(inLine: line, isJSON: true).contains(kind))
    }

    /// An escape that is not decoded (a non-JSON file) hides nothing it should not: `\u00e9`
    /// there is six characters, so `Jos\u00e9` is not José.
    @Test func escapesAreDecodedOnlyInJSONFiles() {
        let scanner = ResidualScanner(roster: PlantedRoster.participants)
        #expect(scanner.kinds(inLine: #"saw Garc\u00eda"#, isJSON: false).isEmpty)
        #expect(scanner.kinds(inLine: #"saw Garc\u00eda"#, isJSON: true) == [.name])
    }

    /// Random ASCII lines with ASCII-only escapes (and some that decode to non-ASCII, malformed
    /// ones, surrogates, a final lone backslash), scanned as files of each kind.
    @Test(arguments: [1, 2] as [UInt64])
    func randomEscapedFilesMatchTheReferenceScanner(seed: UInt64) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("deid-escape-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let roster = Self.roster
        let reference = ReferenceScanner(roster: roster)
        var generator = ScanTextGenerator(roster: roster, seed: 100 + seed)
        var lines: [String] = []
        while lines.count < 1_500 {
            let text = generator.line()
            guard text.utf8.allSatisfy({ $0 < 0x80 }) else { continue }
            lines.append(Self.escaped(text, &generator))
        }
        #expect(lines.filter { $0.contains("\\") }.count > 1_000)
        let bytes = Data((lines.joined(separator: "\n") + "\n").utf8)
        var expected: [ResidualFinding] = []
        // JSON files value by value (each line holds one string value), text line by line.
        for name in ["a.json", "b.ndjson", "c.txt"] {
            try bytes.write(to: directory.appendingPathComponent(name))
            expected += reference.findings(lines, file: name, isJSON: name != "c.txt")
        }
        #expect(expected.count > 500)
        let scanner = ResidualScanner(roster: roster, threads: 2, pieceSize: 8_192)
        #expect(try scanner.scan(directory: directory).findings.rosterOnly.map(\.place) == expected.map(\.place))
    }

    /// `text` escaped the way JSON writers (and careless ones) do, ASCII escapes mostly.
    static func escaped(_ text: String, _ g: inout ScanTextGenerator) -> String {
        var out = ""
        for s in text.unicodeScalars {
            switch s {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "/" where g.chance(50): out += "\\/"
            case "\t": out += g.pick(["\\t", "\\u0009"])
            default:
                if g.chance(4) {
                    out += String(format: g.chance(50) ? "\\u%04x" : "\\u%04X", s.value)
                } else {
                    out.unicodeScalars.append(s)
                }
            }
            if g.chance(2) {
                out += g.pick(["\\n", "\\r", "\\b", "\\f", "\\/", "\\u12", "\\u", "\\x", "\\ud83d", "\\udc00", "\\ud83d\\ude00", "\\u00e9", "\\u0041"])
            }
        }
        return "{\"note\":\"" + out + (g.chance(5) ? "\"}\\" : "\"}")
    }
}
