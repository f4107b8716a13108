import Testing

import CohortCore

struct CSVTextTests {
    @Test(arguments: [
        "plain", "", "a,b", "say \"hi\"", "line\nbreak", "cr\rhere", "crlf\r\nend", "\"", ",", "ünïcode ✓", "trailing space ",
        "\"\u{301} a quote with a combining mark", "x\"\u{301},\"\u{301}",
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

    /// `appendField` writes the bytes of `field(_:)` (which quotes through Foundation), appended
    /// after what the buffer already holds.
    @Test(arguments: [
        "plain", "", "a,b", "say \"hi\"", "\"\"\"", "line\nbreak", "cr\rhere", "crlf\r\nend", "\"", ",", "ünïcode ✓, \"ß\"", "e\u{301}\"",
        "🙂\"🙂", "trailing space ",
    ])
    func appendedFieldsAreTheFieldsBytes(value: String) {
        var bytes: [UInt8] = Array("x,".utf8)
        CSVText.appendField(value, to: &bytes)
        #expect(bytes == Array(("x," + CSVText.field(value)).utf8))
    }

    @Test func strictReaderRejectsMalformedCSV() {
        #expect(throws: StrictCSV.Problem.self) { try StrictCSV.parse(Array("a,b\nc,d\n".utf8)) }
        #expect(throws: StrictCSV.Problem.self) { try StrictCSV.parse([0xEF, 0xBB, 0xBF] + Array("a\r\n".utf8)) }
        #expect(throws: StrictCSV.Problem.self) { try StrictCSV.parse(Array("a,b\r\nc\r\n".utf8)) }
        #expect(throws: StrictCSV.Problem.self) { try StrictCSV.parse(Array("a,b\"c\r\n".utf8)) }
    }
}
