import Testing

@testable import CohortDeid

struct CodeTableTests {
    /// A 6-row table of two columns: rows 0, 2, 5 equal; rows 1, 4 equal; row 3 alone.
    static func table() -> CodeTable {
        var table = CodeTable(rows: 6, width: 2)
        for (row, cells) in [[1, 1], [2, 0], [1, 1], [1, 2], [2, 0], [1, 1]].enumerated() {
            for (column, code) in cells.enumerated() { table[row, column] = Int32(code) }
        }
        return table
    }

    /// The classes as sets of rows, compared without regard to order.
    static func classes(_ table: CodeTable, rows: [Int32], replacing column: Int? = nil, with values: [Int32] = []) -> Set<Set<Int32>> {
        var rows = rows
        var classes: Set<Set<Int32>> = []
        table.forEachClass(of: &rows, replacing: column, with: values) { classes.insert(Set($0)) }
        return classes
    }

    @Test func rowsWithEqualCodesInEveryColumnAreOneClass() {
        let all: [Int32] = [5, 4, 3, 2, 1, 0]
        #expect(Self.classes(Self.table(), rows: all) == [[0, 2, 5], [1, 4], [3]])
        // Only the rows given take part (rows removed by suppression are not passed).
        #expect(Self.classes(Self.table(), rows: [0, 1, 3]) == [[0], [1], [3]])
    }

    @Test func aReplacedColumnIsReadFromTheCandidateValuesAndTheTableIsUnchanged() {
        let table = Self.table()
        // Column 1 generalized to one value for all: the classes follow column 0 alone.
        #expect(Self.classes(table, rows: [0, 1, 2, 3, 4, 5], replacing: 1, with: [7, 7, 7, 7, 7, 7]) == [[0, 2, 3, 5], [1, 4]])
        #expect(Self.classes(table, rows: [0, 1, 2, 3, 4, 5]) == [[0, 2, 5], [1, 4], [3]])
        var copy = table
        copy.setColumn(1, to: [7, 7, 7, 7, 7, 7])
        #expect(Self.classes(copy, rows: [0, 1, 2, 3, 4, 5]) == [[0, 2, 3, 5], [1, 4]])
        #expect(copy[3, 1] == 7 && copy[3, 0] == 1)
    }

    @Test func aTableWithoutColumnsIsOneClass() {
        #expect(Self.classes(CodeTable(rows: 3, width: 0), rows: [0, 1, 2]) == [[0, 1, 2]])
        #expect(Self.classes(CodeTable(rows: 0, width: 2), rows: []).isEmpty)
    }
}
