import Testing

import CohortCore

struct CSVTextTests {
    @Test(arguments: [
        "plain", "", "a,b", "say \"hi\"", "line\nbreak", "cr\rhere", "crlf\r\nend", "\"", ",", "ünïcode ✓", "trailing space ",
    ])
    func fieldsRoundTripThroughAStrictReader(value: String) throws {
        let line = CSVText.record(["x", value, "y"])
        let records = try StrictCSV.parse(Array(line.utf8))
        #expect(records == [["x", value, "y"]])
    }

    @Test func quotesOnlyWhenNeeded() {
        #expect(CSVText.field("abc") == "abc")
        #expect(CSVText.field("a,b") == "\"a,b\"")
        #expect(CSVText.field("a\"b") == "\"a\"\"b\"")
        #expect(CSVText.record(["a", "b"]) == "a,b\r\n")
    }

    @Test func strictReaderRejectsMalformedCSV() {
        #expect(throws: StrictCSV.Problem.self) { try StrictCSV.parse(Array("a,b\nc,d\n".utf8)) }
        #expect(throws: StrictCSV.Problem.self) { try StrictCSV.parse([0xEF, 0xBB, 0xBF] + Array("a\r\n".utf8)) }
        #expect(throws: StrictCSV.Problem.self) { try StrictCSV.parse(Array("a,b\r\nc\r\n".utf8)) }
        #expect(throws: StrictCSV.Problem.self) { try StrictCSV.parse(Array("a,b\"c\r\n".utf8)) }
    }
}
