import Testing

@testable import CohortCompliance

struct TextTableTests {
    @Test func alignsColumnsUnderAHeaderAndSeparator() {
        let table = TextTable(
            header: ["code", "rate", "note"], rows: [["P-1", "5.0 %", "x"], ["P-0002", "100.0 %"]], alignments: [.left, .right])
        #expect(
            table.render() == """
                code       rate  note
                ------  -------  ----
                P-1       5.0 %  x
                P-0002  100.0 %

                """)
    }

    @Test func emptyTableRendersNothing() {
        #expect(TextTable(header: []).render() == "")
    }
}
