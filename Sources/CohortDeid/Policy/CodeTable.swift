/// The k-anonymizer's working table: every row's published text in every quasi-identifier
/// column as a code, row after row in one flat array — 4 bytes a cell and no heap storage of a
/// row's own. Codes are interned per column (0: an empty cell; equal texts share a code), so
/// rows with equal codes in every column are one equivalence class, and distinct non-zero codes
/// in a column are distinct texts.
struct CodeTable: Sendable {
    /// Columns per row.
    let width: Int
    /// Number of rows.
    let rowCount: Int
    private var codes: [Int32]

    /// A table of `rows` rows of `width` empty cells.
    init(rows: Int, width: Int) {
        self.width = width
        rowCount = rows
        codes = [Int32](repeating: 0, count: rows * width)
    }

    /// The code of one cell.
    subscript(row: Int, column: Int) -> Int32 {
        get { codes[row * width + column] }
        set { codes[row * width + column] = newValue }
    }

    /// Replaces a whole column (`values`: one code per row).
    mutating func setColumn(_ column: Int, to values: [Int32]) {
        for row in 0..<rowCount { codes[row * width + column] = values[row] }
    }

    /// Groups `rows` (row numbers) into equivalence classes: reorders them so every class is a
    /// run, and calls `body` with each run. With `column`, that column is read from `values`
    /// (one code per row) instead of the table: a candidate step counted without a copy.
    ///
    /// Sorting a permutation instead of hashing rows keeps the extra memory at the 4 bytes a
    /// row of `rows` itself; a permutation left sorted by the last call sorts fast again.
    func forEachClass(
        of rows: inout [Int32], replacing column: Int? = nil, with values: [Int32] = [], _ body: (ArraySlice<Int32>) -> Void
    ) {
        let replaced = column ?? -1
        func code(_ row: Int, _ column: Int) -> Int32 { column == replaced ? values[row] : codes[row * width + column] }
        func order(_ a: Int32, _ b: Int32) -> Int {
            for column in 0..<width {
                let x = code(Int(a), column), y = code(Int(b), column)
                if x != y { return x < y ? -1 : 1 }
            }
            return 0
        }
        rows.sort { order($0, $1) < 0 }
        var start = rows.startIndex
        while start < rows.endIndex {
            var end = start + 1
            while end < rows.endIndex, order(rows[start], rows[end]) == 0 { end += 1 }
            body(rows[start..<end])
            start = end
        }
    }
}
