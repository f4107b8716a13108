import CohortCore
import CohortKit
import Foundation
import Testing
import CohortStore

/// Import errors for broken and hostile files: they name file, line, column or field and what
/// was expected — never a value from the file — and store nothing.
struct RowSourceTests {
    static let name = "Zoë O'Brien"
    static let email = "zoe.obrien@example.net"

    @Test func headerlessRecordsFileSaysTheHeaderIsMissingWithoutEchoingTheFirstRow() throws {
        let f = try ImportFixture()
        defer { f.cleanup() }
        let text = "\(Self.name),\(Self.email),2026-10-02T08:00:00,,4,,,,\n"
        let error = try #require(try f.importError("headerless.csv", text))
        #expect(error.message == "the header is missing or unknown: expected participant,kind,start,end,value,unit,text,source,note")
        #expect(error.location?.line == 1)
        #expect(!error.description.contains("Zo") && !error.description.contains("example.net"))
        #expect(try f.recordCount() == 0)
    }

    @Test func unknownHeaderCellIsNamedOnlyWhenItLooksLikeAColumn() throws {
        let f = try ImportFixture()
        defer { f.cleanup() }
        let typo = try #require(try f.importError("a.csv", "participant,kind,start,valeu\nP-0001,pain,2026-10-02T08:00:00,4\n"))
        #expect(typo.location?.field == "column 4" && typo.hint?.hasPrefix("did you mean 'value'?") == true)
        #expect(!typo.description.contains("valeu"), "a header cell is never quoted: it may be a value")
        // The header and the first row run together (a lost line end): the cell holds a value.
        let joined = try #require(try f.importError("b.csv", "participant,kind,start,note\(Self.email)\nP-0001,pain,2026-10-02T08:00:00,x\n"))
        #expect(joined.message == "unknown column: column 4 of the header is not a known column")
        #expect(!joined.description.contains("example.net"))
        let twice = try #require(try f.importError("c.csv", "participant,kind,start,value,value\nP-0001,pain,2026-10-02T08:00:00,4,5\n"))
        #expect(twice.message.contains("named twice") && twice.location?.field == "value")
    }

    @Test func headerlessRosterDoesNotEchoANameOrEmail() throws {
        let f = try ImportFixture()
        defer { f.cleanup() }
        let url = try f.write("roster.csv", "P-0100,\(Self.name),\(Self.email),,,,,,,UTC,2026-10-01,\nP-0101,Ann Other,ann@example.org,,,,,,,UTC,2026-10-01,\n")
        let before = try f.workspace.store.counts()["participants"]
        let error = try #require(throws: CohortError.self) { try Roster(workspace: f.workspace).importCSV(url) }
        #expect(error.message == "the header is missing or unknown: expected code,name,email,phone,birth_date,sex,address,zip,mrn,time_zone,enrolled_on,devices,site")
        #expect(!error.description.contains("Zo") && !error.description.contains("example"))
        #expect(try f.workspace.store.counts()["participants"] == before)
        let twice = try f.write("twice.csv", "code,name,name,time_zone,enrolled_on\nP-0100,A,B,UTC,2026-10-01\n")
        #expect((try? Roster(workspace: f.workspace).importCSV(twice)) == nil, "a duplicate roster column is refused, not last-one-wins")
    }

    @Test func jsonSyntaxErrorsNameLineAndColumn() throws {
        let f = try ImportFixture()
        defer { f.cleanup() }
        let json = "[\n  {\"participant\": \"P-0001\", \"kind\": \"pain\", \"start\": \"2026-10-02T08:00:00\", \"value\": 4},\n  {\"participant\": \"P-0001\" \"note\": \"\(Self.name)\"}\n]\n"
        let error = try #require(try f.importError("a.json", json))
        #expect(error.location?.line == 3)
        #expect(error.message == "the file is not valid JSON at line 3, column 28: expected ',' or '}'")
        #expect(!error.description.contains("Zo"))
        let ndjson = "{\"participant\":\"P-0001\",\"kind\":\"pain\",\"start\":\"2026-10-02T08:00:00\",\"value\":4}\n{\"participant\":\"P-0001\",\"note\":\"\(Self.name)\" x}\n"
        let line = try #require(try f.importError("a.ndjson", ndjson))
        #expect(line.location?.line == 2)
        #expect(line.message == "the line is not valid JSON at column 46: expected ',' or '}'")
        #expect(try f.recordCount() == 0)
    }

    @Test(arguments: ["csv", "ndjson", "json"])
    func tenMegabyteKindIsRefusedAtTheFieldCap(_ format: String) throws {
        let f = try ImportFixture()
        defer { f.cleanup() }
        let kind = String(repeating: "pain", count: 2_500_000)
        let text: String
        switch format {
        case "csv": text = "participant,kind,start,value\nP-0001,\(kind),2026-10-02T08:00:00,4\n"
        case "ndjson": text = "{\"participant\":\"P-0001\",\"kind\":\"\(kind)\",\"start\":\"2026-10-02T08:00:00\",\"value\":4}\n"
        default: text = "[{\"participant\":\"P-0001\",\"kind\":\"\(kind)\",\"start\":\"2026-10-02T08:00:00\",\"value\":4}]"
        }
        let error = try #require(try f.importError("big.\(format)", text))
        #expect(error.code == .invalidInput)
        // CSV caps the field, NDJSON the line (1 MiB), JSON the value: each before validation.
        let expected = ["csv": "field 2 is longer than 64 KiB", "ndjson": "the line is longer than 1 MiB", "json": "the value is longer than 64 KiB"]
        #expect(error.message == expected[format], "\(error.message)")
        #expect(error.description.count < 400, "the error does not carry the field")
        #expect(try f.recordCount() == 0)
    }

    @Test func ndjsonValueOverTheFieldCapInAShortLineIsRefused() throws {
        let f = try ImportFixture()
        defer { f.cleanup() }
        let note = String(repeating: "n", count: 70_000)
        let error = try #require(try f.importError("n.ndjson", "{\"participant\":\"P-0001\",\"kind\":\"pain\",\"start\":\"2026-10-02T08:00:00\",\"value\":4,\"note\":\"\(note)\"}\n"))
        #expect(error.message == "the value is longer than 64 KiB" && error.location?.field == "note")
    }
}
