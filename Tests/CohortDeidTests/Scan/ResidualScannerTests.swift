import CohortCore
import CohortCrypto
import Foundation
import Testing

@testable import CohortDeid

/// A generated corpus of notes with planted identifiers, each template tagged with what the
/// residual scanner must find in it when left unscrubbed (nil: only the scrubber's detectors
/// know it, e.g. a stranger's SSN or a first name alone).
enum PlantedCorpus {
    typealias Template = (kind: IdentifierKind?, make: @Sendable (Participant, ParticipantIdentity) -> String)

    static let templates: [Template] = [
        (.name, { _, id in "Talked to \(id.name) about the flare" }),
        (.name, { _, id in "\(id.name.uppercased()) skipped the morning dose" }),
        (.name, { _, id in "\(lastName(id))'s knee was worse" }),
        (.name, { _, id in "Dr. visit with \(lastName(id).replacingOccurrences(of: "'", with: "’")) went fine" }),
        (.name, { _, id in "\(firstName(id)) \"Kiki\" \(lastName(id)) came by" }),
        (.name, { _, id in "\(lastName(id).folding(options: .diacriticInsensitive, locale: nil)), \(firstName(id)) — pain 6" }),
        (.device, { _, id in "\(id.devices.first ?? "") stopped syncing" }),
        (.device, { _, id in "replaced \(id.devices.last ?? "") today" }),
        (.email, { _, id in "mail me <\(id.email ?? "")> please" }),
        (.phone, { _, id in "call \(id.phone ?? "") after 6" }),
        (.phone, { _, id in "cell \(reformatPhone(id.phone ?? "", style: 0))" }),
        (.phone, { _, id in "cell \(reformatPhone(id.phone ?? "", style: 1))" }),
        (.phone, { _, id in "cell \(reformatPhone(id.phone ?? "", style: 2))" }),
        (.birthDate, { _, id in "birthday \(format(id.birthDate, style: 0)) party" }),
        (.birthDate, { _, id in "born \(format(id.birthDate, style: 1))" }),
        (.birthDate, { _, id in "DOB \(format(id.birthDate, style: 2))" }),
        (.birthDate, { _, id in "DOB \(format(id.birthDate, style: 3))" }),
        (.mrn, { _, id in "MRN: \(id.mrn ?? "")" }),
        (.mrn, { _, id in "chart \(id.mrn ?? "") updated" }),
        (.address, { _, id in "moved to \(id.address?.split(separator: ",").first ?? "") last week" }),
        (.code, { p, _ in "participant \(p.code) asked" }),
        (nil, { _, id in "\(firstName(id)) felt tired" }),
        (nil, { _, _ in "ssn 123-45-6789 on file" }),
        (nil, { _, _ in "on 14 March 2025 and 03/14/2025 and 2025-03-14 it rained" }),
        (nil, { _, _ in "see https://example.com/x and 10.0.0.7" }),
        (nil, { _, _ in "neighbour lives at 9 Oak Road Apt 3" }),
    ]

    static func firstName(_ id: ParticipantIdentity) -> String { String(id.name.split(separator: " ").first ?? "") }
    static func lastName(_ id: ParticipantIdentity) -> String { String(id.name.split(separator: " ").last ?? "") }

    static func reformatPhone(_ phone: String, style: Int) -> String {
        let d = Array(phone.filter(\.isNumber).suffix(10))
        let a = String(d[0..<3]), b = String(d[3..<6]), c = String(d[6..<10])
        switch style {
        case 0: return "+1 \(a) \(b) \(c)"
        case 1: return "\(a).\(b).\(c)"
        default: return "\(a)-\(b)-\(c)"
        }
    }

    static func format(_ date: CivilDate?, style: Int) -> String {
        guard let date else { return "" }
        let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
        let mm = String(format: "%02d", date.month), dd = String(format: "%02d", date.day)
        switch style {
        case 0: return "\(mm)/\(dd)/\(date.year)"
        case 1: return "\(date.day) \(months[date.month - 1]) \(date.year)"
        case 2: return date.description
        default: return "\(months[date.month - 1]) \(date.day), \(date.year)"
        }
    }

    /// (note, expected kind) lines: every template for every roster participant, shuffled.
    static func notes(roster: [Participant], seed: UInt64) -> [(String, IdentifierKind?)] {
        var g = SeededRandom(seed: seed)
        var result: [(String, IdentifierKind?)] = []
        for participant in roster {
            guard let identity = participant.identity else { continue }
            for template in templates where template.kind != .device || !identity.devices.isEmpty {
                result.append((template.make(participant, identity), template.kind))
            }
        }
        result.shuffle(using: &g)
        return result
    }
}

struct ResidualScannerTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("deid-scan-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func write(_ lines: [String], to name: String) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try (lines.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    func cleanUp() { try? FileManager.default.removeItem(at: directory) }

    @Test(arguments: [1 as UInt64, 2, 3])
    func scrubbedCorpusIsCleanUnscrubbedCopyIsCaught(seed: UInt64) throws {
        defer { cleanUp() }
        let roster = PlantedRoster.participants + Fixtures.roster(count: 30, seed: seed)
        let scrubber = try Scrubber(roster: roster)
        let scanner = ResidualScanner(roster: roster)
        let notes = PlantedCorpus.notes(roster: roster, seed: seed)

        let scrubbed = notes.map { scrubber.scrub($0.0) }
        let clean = try write(scrubbed, to: "scrubbed.txt")
        let cleanFindings = try scanner.scan(files: [clean])
        for finding in cleanFindings.prefix(5) {
            Issue.record("residual \(finding.kind) in scrubbed note: \(scrubbed[finding.line - 1])")
        }
        #expect(cleanFindings.isEmpty)

        let raw = try write(notes.map(\.0), to: "raw.txt")
        let findings = try scanner.scan(files: [raw])
        var byLine: [Int: Set<IdentifierKind>] = [:]
        for finding in findings {
            #expect(finding.file == raw.path)
            byLine[finding.line, default: []].insert(finding.kind)
        }
        for (index, note) in notes.enumerated() {
            guard let kind = note.1 else { continue }
            #expect(byLine[index + 1]?.contains(kind) == true, "line \(index + 1) (\(kind)): \(note.0)")
        }
        let fragments = roster.compactMap(\.identity).flatMap { identity in
            identity.name.split(separator: " ").map(String.init) + [identity.email ?? "", identity.mrn ?? ""]
        }
        for finding in findings {
            let description = PlantedRoster.fold(finding.description.replacingOccurrences(of: directory.path, with: ""))
            for fragment in fragments where fragment.count >= 3 {
                #expect(!description.contains(PlantedRoster.fold(fragment)))
            }
        }
    }

    @Test func jsonEscapedNamesAreFound() throws {
        defer { cleanUp() }
        let scanner = ResidualScanner(roster: PlantedRoster.participants)
        let file = try write(
            [#"{"pseudonym":"24JZTCFUFNE77HQB","note":"fine"}"#, #"{"note":"Jos\u00e9 Garc\u00eda called"}"#,
             #"{"note":"Zo\u00eb O\u2019Brien"}"#, #"{"note":"\ud83d\ude00 Smith-Jones"}"#],
            to: "data/json/records.ndjson")
        let result = try scanner.scan(directory: directory)
        #expect(result.filesScanned == 1)
        #expect(result.findings.rosterOnly.map { "\($0.file):\($0.line): \($0.field ?? "-"): \($0.kind.rawValue)" } == [
            "data/json/records.ndjson:2: note: name", "data/json/records.ndjson:3: note: name", "data/json/records.ndjson:4: note: name",
        ])
        // The hash is of the unescaped value, as a reviewer would compute it from the exact text.
        #expect(result.findings.first?.valueSHA256 == SHA256.hex(Array("José García called".utf8)))
        #expect(!result.findings.description.contains("Garc"))
        _ = file
    }

    @Test func pseudonymsTokensAndShiftedDataDoNotFalsePositive() throws {
        defer { cleanUp() }
        let roster = PlantedRoster.participants + Fixtures.roster(count: 200)
        let scanner = ResidualScanner(roster: roster)
        var deid = try Deidentifier(
            studyProtocol: Fixtures.studyProtocol(), recipient: "analyst", recipientKey: Fixtures.key, shiftKey: Fixtures.key, roster: roster,
            referenceDate: Fixtures.date("2025-06-01"))
        var g = SeededRandom(seed: 9)
        var lines = ["pseudonym,kind,start,end,value,unit,source,note"]
        for participant in roster {
            for record in Fixtures.records(for: participant, count: 10, using: &g) {
                var r = record
                if r.kind == .pain, let identity = participant.identity {
                    r.note = "\(identity.name) at \(identity.phone ?? "") [NAME] ok, \(identity.email ?? "")"
                }
                let deidentified = deid.record(r, of: participant)
                let row = try #require(deidentified)
                lines.append(
                    [row.pseudonym, row.kind.rawValue, row.start?.iso8601 ?? "", row.end?.iso8601 ?? "", row.value.map { "\($0)" } ?? "",
                     row.unit ?? "", row.source ?? "", row.note ?? ""].joined(separator: ","))
            }
        }
        let file = try write(lines, to: "records.csv")
        #expect(try scanner.scan(files: [file]).isEmpty)
    }

    @Test func reportsEveryKindOncePerLineAndNeverTheValue() throws {
        defer { cleanUp() }
        let scanner = ResidualScanner(roster: PlantedRoster.participants)
        let kinds = scanner.kinds(inLine: "Zoë O'Brien, zoe.obrien@mail.example.com, 555 987 6543, 11/02/1975, P-0002, MRN 99887766, 123 Main St")
        #expect(kinds == [.name, .email, .phone, .birthDate, .code, .mrn, .address])
        // A first name alone is an identifier (it is not a common word); a longer word containing a name is not.
        #expect(scanner.kinds(inLine: "Jose alone is a first name") == [.name])
        #expect(scanner.kinds(inLine: "Obrienne is another word; josefina too").isEmpty)
    }

    /// A daily total of 7–9 digits is a quantity in a numeric column (JSON writes it as a number,
    /// which the JSON scan does not read); the same digits in free text, or a full 10-digit
    /// number in any column, are still a roster phone (+1 555 987 6543 is planted).
    @Test func shortNumbersInColumnsThatAreNotFreeTextAreQuantities() throws {
        defer { cleanUp() }
        let scanner = ResidualScanner(roster: PlantedRoster.participants)
        let file = try write(
            [
                "pseudonym,kind,value,note", "X,steps,9876543,", "X,steps,-9876543,", "X,energy,987.6543,", "X,steps,5559876543,",
                "X,pain,,call 9876543", "X,pain,,9876543", "X,steps,987-6543,",
            ], to: "daily_totals.csv")
        // (The notes' digits are also unknown tokens of free text; only the phones are counted here.)
        let found = try scanner.scan(files: [file]).filter { $0.kind == .phone }.map { "\($0.line) \($0.field ?? "") \($0.kind)" }
        #expect(found == ["5 value phone", "6 note phone", "7 note phone", "8 value phone"])
    }

    @Test func longFilesStreamWithCorrectLineNumbers() throws {
        defer { cleanUp() }
        let scanner = ResidualScanner(roster: PlantedRoster.participants)
        var lines = [String](repeating: String(repeating: "x", count: 300), count: 8_000)
        lines[6_999] = "row with D'Angelo in it"
        let file = try write(lines, to: "big.txt")
        #expect(try scanner.scan(files: [file]).map { "\($0.file):\($0.line): \($0.kind)" } == ["\(file.path):7000: name"])
    }
}
