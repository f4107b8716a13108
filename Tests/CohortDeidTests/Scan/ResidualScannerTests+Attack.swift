import CohortCore
import Foundation
import Testing

@testable import CohortDeid

/// Participants whose names are ordinary words (the allowance list has them all).
enum VocabularyRoster {
    static let participants: [Participant] = [
        ("Hope", "Field"), ("Will", "Bath"), ("Grace", "Hand"), ("Mark", "Sample"), ("Faith", "Long"), ("Joy", "Little"),
    ].enumerated().map { index, name in
        PlantedRoster.participant(
            String(format: "00000000-0000-4000-8000-0000000001%02d", index), code: String(format: "P-01%02d", index),
            name: "\(name.0) \(name.1)", email: "\(name.0.lowercased()).\(name.1.lowercased())@example.com",
            phone: String(format: "+44 20 7946 %04d", 100 + index), birth: String(format: "1970-0%d-1%d", index + 1, index),
            address: "\(10 + index) Quarry Road, Leeds", zip: "LS1", mrn: String(format: "MRN-7700%04d", index), devices: ["\(name.0)'s Pixel Watch"])
    }
}

/// An export-like folder (CSV, NDJSON, FHIR NDJSON, multi-line FHIR bundles, and cohort's own
/// fixed-text files) whose participant values are clean clinical text or carry a planted
/// identifier in one of many forms.
struct PlantedExport {
    /// One participant value written to the folder: where it is and what it says.
    struct Value {
        var file: String
        var line: Int
        var field: String
        var text: String
        var planted: Bool
    }

    private(set) var values: [Value] = []
    var g: ScanTextGenerator
    let identities: [ParticipantIdentity]

    static let cleanNotes = [
        "pain in left hand", "long walk in the field", "took a warm bath", "blood sample taken", "little sleep", "hope it gets better",
        "will rest today", "Dr. visit at 10:30", "steps 10234", "flare started 2026-03-14", "score 7/10", "BASDAI 4.2", "Long day",
        "Field trip with the kids", "Little better", "Hand swollen", "[NAME] called", "called [PHONE] twice", "my hand's stiff",
        "Grace period for the refill", "Mark on the calendar", "back pain\nbetter after stretching", "heart rate 72 bpm, SpO2 97%",
        "Parkinson-like tremor ruled out", "took naproxen 500 mg", "Sample, Long and Little are words", "Bath then bed",
    ]

    init(roster: [Participant], seed: UInt64) {
        g = ScanTextGenerator(roster: roster, seed: seed)
        identities = roster.compactMap(\.identity)
    }

    /// A planted identifier of some participant in a form the scanner and the attacker know.
    mutating func planted() -> String {
        let id = g.pick(identities)
        let words = id.name.split(separator: " ").map(String.init)
        let first = words.first ?? "", last = words.last ?? ""
        let digits = Array(id.phone?.filter(\.isNumber) ?? "")
        let date = id.birthDate ?? CivilDate(daysSinceEpoch: 0)
        let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
        switch g.number(0...19) {
        case 0: return "talked to Mr \(last) about the flare"
        case 1: return "\(last)'s knee was worse"
        case 2: return "\(first) \(last) came by"
        case 3: return "\(last.lowercased()), \(first.lowercased()) — pain 6"
        case 4: return "\(first) felt tired"
        case 5: return "call +\(String(digits.dropFirst(digits.count > 10 ? 1 : 0)))"
        case 6 where digits.count >= 7: return "cell \(String(digits.suffix(7)).prefix(3))-\(String(digits.suffix(4)))"
        case 7 where digits.count >= 9: return "text \(String(digits.suffix(9)))"
        case 8: return "born \(months[date.month - 1]) \(date.day)\(IdentifierIndex.ordinalSuffix(date.day)), \(date.year)"
        case 9: return "DOB \(String(format: "%02d/%02d/%d", date.month, date.day, date.year))"
        case 10: return "chart \(String((id.mrn ?? "").filter(\.isNumber)))"
        case 11: return "Dr. \(last) said to rest"
        default: return g.identifier()
        }
    }

    mutating func value(_ percent: UInt64, clean: [String]) -> (String, Bool) {
        if g.chance(percent) { return (planted(), true) }
        return (g.pick(clean), false)
    }

    /// Writes the folder; `values` lists every participant value written.
    mutating func write(to directory: URL, rows: Int) throws {
        let fm = FileManager.default
        for sub in ["csv", "json", "fhir/bundles", "reports"] {
            try fm.createDirectory(at: directory.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        // cohort's own fixed text, full of words that are roster surnames.
        let fixed = "Field, Bath, Hand, Sample, Long, Little: the codebook field describes each sample; Hope Field is not here"
        try Data("variable,description\nnote,\(fixed)\n".utf8).write(to: directory.appendingPathComponent("csv/codebook.csv"))
        try Data(#"{"description":"\#(fixed)"}"#.utf8).write(to: directory.appendingPathComponent("csv/datapackage.json"))
        try Data((fixed + "\n").utf8).write(to: directory.appendingPathComponent("README.txt"))
        try Data(#"{"fields_dropped":["\#(fixed)"]}"#.utf8).write(to: directory.appendingPathComponent("reports/deidentification.json"))

        var csv = CSVText.record(["pseudonym", "kind", "start", "value", "unit", "text", "source", "note"])
        var csvLine = 2
        var ndjson = ""
        var fhir = ""
        var bundle = #"{"resourceType":"Bundle","type":"collection","entry":["# + "\n"
        func json(_ s: String) -> String { String(decoding: (try? JSONEncoder().encode(s)) ?? Data(), as: UTF8.self) }
        for row in 0..<rows {
            let (note, notePlanted) = value(30, clean: Self.cleanNotes)
            let (source, sourcePlanted) = value(8, clean: ["smartwatch", "app", "Fitbit Charge 6", "Field recorder"])
            let (text, textPlanted) = value(5, clean: ["naproxen", "ibuprofen 400", "Humira"])
            let start = "2026-03-\(String(format: "%02d", 1 + row % 28))T08:05:00+02:00"
            csv += CSVText.record(["K7QF2M4XRB6TNV3D", "pain", start, "4", "{score}", text, source, note])
            values += [
                Value(file: "csv/symptom_logs.csv", line: csvLine, field: "text", text: text, planted: textPlanted),
                Value(file: "csv/symptom_logs.csv", line: csvLine, field: "source", text: source, planted: sourcePlanted),
                Value(file: "csv/symptom_logs.csv", line: csvLine, field: "note", text: note, planted: notePlanted),
            ]
            csvLine += note.filter { $0 == "\n" }.count + source.filter { $0 == "\n" }.count + text.filter { $0 == "\n" }.count + 1
            ndjson += #"{"pseudonym":"K7QF2M4XRB6TNV3D","kind":"pain","start":"\#(start)","value":4,"unit":"{score}","text":\#(json(text)),"source":\#(json(source)),"note":\#(json(note))}"# + "\n"
            values += [
                Value(file: "json/symptom_logs.ndjson", line: row + 1, field: "text", text: text, planted: textPlanted),
                Value(file: "json/symptom_logs.ndjson", line: row + 1, field: "source", text: source, planted: sourcePlanted),
                Value(file: "json/symptom_logs.ndjson", line: row + 1, field: "note", text: note, planted: notePlanted),
            ]
            let resource = #"{"code":{"coding":[{"code":"72514-3","display":"Pain severity","system":"http://loinc.org"}]},"device":{"display":\#(json(source))},"note":[{"text":\#(json(note))}],"resourceType":"Observation","status":"final","subject":{"reference":"Patient/0be2b449"},"valueString":\#(json(text))}"#
            fhir += resource + "\n"
            bundle += #"{"fullUrl":"urn:uuid:0be2b449","resource":"# + resource + "}" + (row == rows - 1 ? "" : ",") + "\n"
            for (file, line, path) in [("fhir/Observation.ndjson", row + 1, ""), ("fhir/bundles/K7QF2M4XRB6TNV3D.json", row + 2, "entry.resource.")] {
                values += [
                    Value(file: file, line: line, field: path + "device.display", text: source, planted: sourcePlanted),
                    Value(file: file, line: line, field: path + "note.text", text: note, planted: notePlanted),
                    Value(file: file, line: line, field: path + "valueString", text: text, planted: textPlanted),
                ]
            }
        }
        bundle += "]}\n"
        try Data(csv.utf8).write(to: directory.appendingPathComponent("csv/symptom_logs.csv"))
        try Data(ndjson.utf8).write(to: directory.appendingPathComponent("json/symptom_logs.ndjson"))
        try Data(fhir.utf8).write(to: directory.appendingPathComponent("fhir/Observation.ndjson"))
        try Data(bundle.utf8).write(to: directory.appendingPathComponent("fhir/bundles/K7QF2M4XRB6TNV3D.json"))
    }
}

extension ResidualScannerTests {
    /// Complete: every participant value in which the independent attacker finds an identifier,
    /// the scanner reports at that file, line and field, with one of the attacker's kinds. Precise: the scanner reports
    /// nothing in clean values (including the roster's vocabulary surnames used as words) and
    /// nothing in cohort's own fixed-text files, which it skips.
    @Test(arguments: [1 as UInt64, 2, 3])
    func findsEveryIdentifierTheAttackerFindsAndNothingInCleanValues(seed: UInt64) throws {
        defer { cleanUp() }
        let roster = PlantedRoster.participants + VocabularyRoster.participants + Fixtures.roster(count: 40, seed: seed)
        var export = PlantedExport(roster: roster, seed: seed)
        try export.write(to: directory, rows: 600)
        let attacker = AttackerScanner(roster: roster)
        let result = try ResidualScanner(roster: roster, threads: 2, pieceSize: 16_384).scan(directory: directory)
        #expect(Set(result.filesSkipped) == ["README.txt", "csv/codebook.csv", "csv/datapackage.json", "reports/deidentification.json"])

        var found: [String: Set<IdentifierKind>] = [:]
        for f in result.findings.rosterOnly { found["\(f.file):\(f.line):\(f.field ?? "")", default: []].insert(f.kind) }
        var attackerHits = 0, planted = 0, missed = 0, extra = 0
        for value in export.values {
            let expected = attacker.kinds(in: value.text)
            let actual = found.removeValue(forKey: "\(value.file):\(value.line):\(value.field)") ?? []
            if value.planted { planted += 1 }
            if !value.planted {
                #expect(expected.isEmpty, "the attacker flags a clean value: \(value.text)")
                #expect(actual.isEmpty, "\(value.file):\(value.line) \(value.field): \(actual) in clean value \(value.text)")
                if !actual.isEmpty { extra += 1 }
                continue
            }
            attackerHits += expected.isEmpty ? 0 : 1
            // A name inside an email or a device name is reported as the email or device (the
            // longer identifier): the value must be flagged, with at least one of the same kinds.
            if !expected.isEmpty && expected.isDisjoint(with: actual) {
                missed += 1
                Issue.record("\(value.file):\(value.line) \(value.field): attacker \(expected), scanner \(actual): \(value.text)")
            }
        }
        // Findings only where values were written (no header, key, or fixed-vocabulary hits).
        #expect(found.isEmpty, "findings at unexpected places: \(found.keys.sorted().prefix(5))")
        #expect(missed == 0 && extra == 0)
        // The corpus must plant enough identifiers the attacker sees for the test to mean something.
        #expect(planted > 500 && attackerHits > planted * 8 / 10, "planted \(planted), attacker found \(attackerHits)")
    }

    /// A vocabulary surname counts only as a full name, with a title, or as a capitalized
    /// possessive; as an ordinary word it is no finding.
    @Test(arguments: [
        ("Hope Field came by", true), ("field, hope", true), ("Mr Field called", true), ("Dr. Hand said", true), ("Field's knee", true),
        ("long walk in the field", false), ("Field trip", false), ("my hand's stiff", false), ("a little sample", false),
        ("hope so", false), ("Bath then bed", false), ("Grace period", false),
    ])
    func vocabularyNamesOnlyAsPersons(text: String, isName: Bool) {
        let scanner = ResidualScanner(roster: VocabularyRoster.participants)
        #expect(scanner.kinds(inLine: text).contains(.name) == isName, "\(text)")
        #expect(AttackerScanner(roster: VocabularyRoster.participants).kinds(in: text).contains(.name) == isName, "\(text)")
    }

    /// Phones as digit runs with any separators: the last 7–10 digits of a roster phone, or a
    /// longer number (country code) ending in its last 10.
    @Test(arguments: [
        ("+44 20 7946 0100", true), ("020 7946 0100", true), ("2079460100", true), ("7946 0100", true), ("946-0100", true),
        ("079460100", true), ("0044 20 7946 0100", true), ("7946 0101", true), ("946 0199", false), ("2026-03-14", false), ("12:30 7946", false),
    ])
    func phonesByTheirLastDigits(text: String, isPhone: Bool) {
        let scanner = ResidualScanner(roster: VocabularyRoster.participants)
        #expect(scanner.kinds(inLine: text).contains(.phone) == isPhone, "\(text)")
    }
}
