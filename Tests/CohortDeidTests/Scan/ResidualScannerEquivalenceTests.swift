import CohortCore
import Foundation
import Testing

@testable import CohortDeid

/// Random lines of export-like text with planted identifiers (in many spellings), near misses,
/// typed tokens, non-ASCII letters, and the JSON-escaped form of each line.
struct ScanTextGenerator {
    var g: SeededRandom
    let identities: [(Participant, ParticipantIdentity)]

    init(roster: [Participant], seed: UInt64) {
        g = SeededRandom(seed: seed)
        identities = roster.compactMap { p in p.identity.map { (p, $0) } }
    }

    mutating func pick<T>(_ items: [T]) -> T { items[Int(g.next() % UInt64(items.count))] }
    mutating func chance(_ percent: UInt64) -> Bool { g.next() % 100 < percent }
    mutating func number(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &g) }

    static let noise = [
        "pain", "felt", "ok", "heart_rate", "Apple", "Watch", "Main", "St", "the", "Jose", "kate", "Kate", "Garcia", "obrien",
        "smith", "Jones", "mrn", "P", "SN", "Street", "Elm", "Avenue", "march", "Mar", "may", "14", "03", "1980", "555", "123",
        "4567", "0001", "[NAME]", "[PHONE]", "[ID]", "[name]", "K7QF2M4XRB6TNV3D", "2026-01-02T03:04:05+01:00", "72", "bpm", "é",
        "ü", "straße", "İstanbul", "ﬁne", "e\u{0301}", "😀", "\u{00A0}", "٣٣", "\u{212A}elvin", "D’", "O'", "’s", "'s", "Zoë",
        "ZOË", "Siobhan", "Siobhán", "D'Angelo", "dangelo", "Smith-Jones", "@", "example.org", "(555)", "+1", "-", "/", ".",
        "Jane's", "Bob’s", "iPhone", "Fitbit", "Charge", "Kit", "Will", "will", "Springfield", "62704", "[DEVICE]",
        "don’t", "rock’n’roll", "ñ", "Ç", "ø", "Å", "æ", "Œ", "ð", "þ", "ł", "Đ", "ǅ", "ı", "ß", "ſ", "Ŋ", "ÿ", "ĳ", "Garcı́a",
        "GARCÍA", "MÜLLER", "müller", "Muller", "Ǆ", "ɐ", "ȸ", "Ș", "ẞ", "Ω", "Σας", "中文", "ǰ",
    ]
    static let separators = [" ", " ", " ", ", ", "-", "", "\t", " / ", "'s ", "(", ") ", ",", ".", ": ", "\"", "\\", "[", "]", "  ", "\u{00A0}"]

    mutating func identifier() -> String {
        let (participant, id) = pick(identities)
        let first = String(id.name.split(separator: " ").first ?? "")
        let last = String(id.name.split(separator: " ").last ?? "")
        let digits = Array((id.phone ?? "").filter(\.isNumber).suffix(10))
        let date = id.birthDate ?? CivilDate(daysSinceEpoch: 0)
        let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
        let mm = String(format: "%02d", date.month), dd = String(format: "%02d", date.day)
        switch number(0...24) {
        case 0: return id.name
        case 1: return id.name.uppercased()
        case 2: return last
        case 3: return "\(last), \(first)"
        case 4: return "\(last)'s"
        case 5: return last.replacingOccurrences(of: "'", with: "’").replacingOccurrences(of: "’", with: pick(["'", "’", ""]))
        case 6: return id.name.folding(options: .diacriticInsensitive, locale: nil)
        case 7: return first
        case 8: return id.email ?? ""
        case 9: return id.phone ?? ""
        case 10 where digits.count == 10:
            let a = String(digits[0..<3]), b = String(digits[3..<6]), c = String(digits[6..<10])
            return pick(["+1 \(a) \(b) \(c)", "\(a).\(b).\(c)", "\(a)-\(b)-\(c)", a + b + c, "\(b)-\(c)", "1\(a)\(b)\(c)", "\(a)\(b)-\(c)x"])
        case 11: return date.description
        case 12: return "\(mm)/\(dd)/\(date.year)"
        case 13: return "\(dd).\(mm).\(date.year)"
        case 14: return "\(date.month)/\(date.day)/\(String(format: "%02d", date.year % 100))"
        case 15: return "\(date.day) \(months[date.month - 1]) \(date.year)"
        case 16: return "\(pick([months[date.month - 1], String(months[date.month - 1].prefix(3))])) \(date.day), \(date.year)"
        case 17: return id.mrn ?? ""
        case 18: return participant.code
        case 19: return String(id.address?.split(separator: ",").first ?? "")
        case 20: return id.devices.isEmpty ? first : pick(id.devices)
        case 21: return "\(date.year)-\(mm)-\(dd)T08:30:00Z"
        case 22: return "\(first) \"\(pick(["Kiki", "Kit"]))\" \(last)"
        case 23: return String((id.mrn ?? "").dropFirst())
        default: return "\(first) \(last)"
        }
    }

    /// One line (no line breaks) with 1–12 segments.
    mutating func line() -> String {
        var text = ""
        for _ in 0..<number(1...12) {
            if chance(35) {
                text += identifier()
            } else if chance(20) {
                text += String(number(0...99_999))
            } else {
                text += pick(Self.noise)
            }
            text += pick(Self.separators)
        }
        return text
    }

    /// `text` as the content of a JSON string, escaped in one of several ways (some escapes
    /// deliberately malformed).
    mutating func jsonEscaped(_ text: String) -> String {
        var out = "{\"note\":\""
        for s in text.unicodeScalars {
            switch s {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\t": out += "\\t"
            default:
                if s.value >= 0x80 && chance(60) || chance(3) {
                    if s.value > 0xFFFF {
                        let v = s.value - 0x10000
                        out += String(format: "\\u%04x\\u%04X", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF))
                    } else {
                        out += String(format: chance(50) ? "\\u%04x" : "\\u%04X", s.value)
                    }
                } else {
                    out.unicodeScalars.append(s)
                }
            }
            if chance(2) { out += pick(["\\n", "\\/", "\\u12", "\\x", "\\ud83d", "\\udc00x", "\\r\\n"]) }
        }
        return out + "\"}"
    }
}

struct ResidualScannerEquivalenceTests {
    static let smallRoster = PlantedRoster.participants + Fixtures.roster(count: 40, seed: 5)
    static let largeRoster = PlantedRoster.participants + Fixtures.roster(count: 2_000, seed: 6)

    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("deid-equiv-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func cleanUp() { try? FileManager.default.removeItem(at: directory) }

    @Test(arguments: [(1 as UInt64, false), (2, false), (3, true), (4, true)])
    func linesMatchTheReferenceScanner(seed: UInt64, large: Bool) {
        let roster = large ? Self.largeRoster : Self.smallRoster
        let scanner = ResidualScanner(roster: roster)
        let reference = ReferenceScanner(roster: roster)
        var generator = ScanTextGenerator(roster: roster, seed: seed)
        var found = 0
        for _ in 0..<2_000 {
            let line = generator.line()
            let expected = reference.kinds(inLine: line)
            #expect(scanner.kinds(inLine: line) == expected, "\(line)")
            let json = generator.jsonEscaped(line)
            let expectedJSON = reference.kinds(inLine: json, isJSON: true)
            #expect(scanner.kinds(inLine: json, isJSON: true) == expectedJSON, "\(json)")
            found += expected.count + expectedJSON.count
        }
        // The corpus must exercise the matchers, not just agree on empty results.
        #expect(found > 1_000)
    }

    @Test func edgeLinesMatchTheReferenceScanner() {
        let roster = Self.smallRoster
        let scanner = ResidualScanner(roster: roster)
        let reference = ReferenceScanner(roster: roster)
        let lines = [
            "", " ", ",,,;;", "0", "1234567", String(repeating: "ß", count: 3_000) + " " + String(repeating: "x", count: 3_000) + " O'Brien",
            String(repeating: "ǅĳ ", count: 500) + "Smith-Jones", String(repeating: "9", count: 10_000), String(repeating: "a'", count: 2_000),
            "\\u00e9\\", "\\ud83d", "\\u", "José García", "Jose\u{0301} Garci\u{0301}a", "[NAME] [name] [NAME", "O’Brien’s", "’s",
            "555 987 6543", "+1 555 987 6543 9", "11/02/1975", "1975-11-02T00:00", "02.11.75", "2/11/75", "P-0002", "p 0002",
        ]
        for line in lines {
            #expect(scanner.kinds(inLine: line) == reference.kinds(inLine: line), "\(line.prefix(80))")
            #expect(scanner.kinds(inLine: line, isJSON: true) == reference.kinds(inLine: line, isJSON: true), "\(line.prefix(80))")
        }
    }

    @Test(arguments: [1, 2])
    func filesMatchTheReferenceWhateverThreadsAndPieces(threads: Int) throws {
        defer { cleanUp() }
        let roster = Self.smallRoster
        let reference = ReferenceScanner(roster: roster)
        var generator = ScanTextGenerator(roster: roster, seed: 40 + UInt64(threads))
        var expected: [ResidualFinding] = []
        // CSV with LF, NDJSON with CRLF, a file with invalid UTF-8 and no final line end, an empty file.
        let csv = (0..<1_500).map { _ in generator.line() }
        try (csv.joined(separator: "\n") + "\n").write(to: directory.appendingPathComponent("a/records.txt"), createDirectories: true)
        expected += reference.findings(csv, file: "a/records.txt", isJSON: false)
        let json = (0..<1_500).map { _ in generator.jsonEscaped(generator.line()) }
        try (json.joined(separator: "\r\n") + "\r\n").write(to: directory.appendingPathComponent("b/records.ndjson"), createDirectories: true)
        expected += reference.findings(json, file: "b/records.ndjson", isJSON: true)
        var raw: [[UInt8]] = []
        for _ in 0..<300 {
            var bytes = Array(generator.line().utf8)
            if generator.chance(30) { bytes.insert(generator.pick([0xFF, 0xC3, 0xE2, 0x80, 0xED]), at: generator.number(0...bytes.count)) }
            raw.append(bytes)
        }
        let rawBytes = Array(raw.joined(separator: [0x0A]))
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("c"), withIntermediateDirectories: true)
        try Data(rawBytes).write(to: directory.appendingPathComponent("c/raw.txt"))
        expected += reference.findings(raw.map { String(decoding: $0, as: UTF8.self) }, file: "c/raw.txt", isJSON: false)
        try Data().write(to: directory.appendingPathComponent("d-empty.csv"))
        #expect(expected.count > 500)

        for pieceSize in [1 << 22, 4_096, 1] {
            let scanner = ResidualScanner(roster: roster, threads: threads, pieceSize: pieceSize)
            let result = try scanner.scan(directory: directory)
            #expect(result.filesScanned == 4)
            // Text files line by line, NDJSON value by value: the same places and kinds.
            #expect(result.findings.rosterOnly.map(\.place) == expected.map(\.place), "piece size \(pieceSize)")
            #expect(result.findings == result.findings.sorted())
        }
        let files = [directory.appendingPathComponent("b/records.ndjson"), directory.appendingPathComponent("a/records.txt")]
        let listed = try ResidualScanner(roster: roster, threads: threads, pieceSize: 10_000).scan(files: files)
        let expectedListed =
            reference.findings(json, file: files[0].path, isJSON: true) + reference.findings(csv, file: files[1].path, isJSON: false)
        #expect(listed.rosterOnly.map(\.place) == expectedListed.map(\.place))
    }

    @Test func aLargeRosterStillFindsEveryPlantedIdentifier() throws {
        defer { cleanUp() }
        let small = ResidualScanner(roster: PlantedRoster.participants)
        let large = ResidualScanner(roster: Self.largeRoster)
        let notes = PlantedCorpus.notes(roster: PlantedRoster.participants, seed: 3)
        let file = directory.appendingPathComponent("notes.txt")
        try (notes.map(\.0).joined(separator: "\n") + "\n").write(to: file, createDirectories: false)
        let byLine = Dictionary(grouping: try large.scan(files: [file]), by: \.line).mapValues { Set($0.map(\.kind)) }
        for (index, note) in notes.enumerated() {
            guard let kind = note.1 else { continue }
            #expect(byLine[index + 1]?.contains(kind) == true, "\(note.0)")
            // What the small roster finds, the large one finds too.
            #expect(small.kinds(inLine: note.0).isSubset(of: large.kinds(inLine: note.0)), "\(note.0)")
        }
    }
}

extension ResidualFinding {
    /// File, line and kind (the reference scanner reads lines, not fields).
    var place: String { "\(file):\(line): \(kind.rawValue)" }
}

extension String {
    fileprivate func write(to url: URL, createDirectories: Bool) throws {
        if createDirectories {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        }
        try Data(utf8).write(to: url)
    }
}

struct IdentifierIndexTests {
    /// The eight-bytes-at-a-time digit test the numeric pass skips text with.
    @Test func wordDigitTestAgreesWithBytes() {
        var g = SeededRandom(seed: 77)
        for round in 0..<50_000 {
            var bytes = (0..<8).map { _ in UInt8.random(in: 0...255, using: &g) }
            if round % 2 == 0 { bytes = bytes.map { $0 % 0x40 + 0x20 } }  // near the digit range
            let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            #expect(IdentifierIndex.hasDigit(word) == bytes.contains { $0 >= 0x30 && $0 <= 0x39 }, "\(bytes)")
        }
    }

    /// The one matcher (packed words, compiled index: flat arrays, ASCII key arena, number sets)
    /// finds exactly the words, phrases, phone numbers and birth dates the reference finds from
    /// the plain `Source` tables, in both modes, as the scrubber calls it: on scalars, words
    /// skipped, and phrases refused by its context rules giving way to shorter ones.
    @Test(arguments: [(IdentifierIndex.Mode.scrubber, 11 as UInt64), (.scanner, 12)])
    func compiledIndexMatchesItsSource(mode: IdentifierIndex.Mode, seed: UInt64) {
        let roster = ResidualScannerEquivalenceTests.smallRoster
        let index = IdentifierIndex(roster: roster, mode: mode)
        let reference = ReferenceScanner(roster: roster, mode: mode)
        var generator = ScanTextGenerator(roster: roster, seed: seed)
        var found = 0
        var refused = 0
        var workspace = LineWorkspace()
        for _ in 0..<3_000 {
            let line = generator.line()
            let scalars = Array(line.unicodeScalars)
            let tokens = TextTokenizer.tokens(line)
            let refTokens = ReferenceScanner.tokens(scalars)
            #expect(tokens.map(\.key) == refTokens.map(\.key))
            #expect(tokens.map(\.letterCount) == refTokens.map(\.letterCount))
            #expect(tokens.map { [$0.start, $0.coreEnd, $0.end] } == refTokens.map { [$0.start, $0.coreEnd, $0.end] })
            #expect(tokens.map(\.isCapitalized) == refTokens.map(\.isCapitalized))
            let skip = { (t: Int) in t % 7 == 3 }
            // The scrubber's refusals: here, multi-word phrases starting at an even word.
            let accept = { (m: IdentifierIndex.Match) in m.firstToken == m.lastToken || m.firstToken % 2 == 1 }
            workspace.load(line)
            var matches: [String] = []
            var phones: [Range<Int>] = []
            var dates: [Range<Int>] = []
            workspace.scalars.withUnsafeBufferPointer { s in
                TextTokenizer.tokenize(s, into: &workspace)
                index.matches(scalars: s, workspace: workspace, skip: skip, accept: accept) {
                    matches.append("\($0.firstToken)-\($0.lastToken) \($0.kind)")
                }
                index.numericMatches(s, groups: &workspace.groups, firstOnly: false) { range, kind in
                    if kind == .phone { phones.append(range) } else { dates.append(range) }
                }
            }
            let expected = reference.matches(in: scalars, tokens: refTokens, skip: skip, accept: accept)
                .map { "\($0.firstToken)-\($0.lastToken) \($0.kind)" }
            #expect(matches == expected, "\(line)")
            refused += reference.matches(in: scalars, tokens: refTokens, skip: skip).count - expected.count == 0 ? 0 : 1
            if mode == .scrubber {
                #expect(phones == reference.phoneRanges(in: scalars), "\(line)")
            } else {
                #expect(!phones.isEmpty == reference.hasScannerPhone(in: scalars), "\(line)")
            }
            #expect(dates == reference.birthDateRanges(in: scalars), "\(line)")
            found += expected.count + phones.count + dates.count
        }
        #expect(found > 1_000)
        // Refusals happen, so the fall-back to shorter phrases is exercised.
        #expect(refused > 100)
    }
}
