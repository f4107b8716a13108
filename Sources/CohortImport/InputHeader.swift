import CohortCore
package import CohortIO
import Foundation

/// The header line of an input file (records or roster), checked without echoing the file: a
/// headerless file's first line holds a participant's values, and even in a real header a cell
/// may be a value (a lost line end joins the header and the first row), so an unknown cell is
/// named by its position, with the closest column as a suggestion.
package enum InputHeader {
    /// The header's column names (trimmed, lower-cased), in order. `ignored`: columns accepted
    /// besides `expected` but not advertised (a rejects file's `line,field,reason`).
    ///
    /// - Throws: `.invalidInput` when no required column is present ("the header is missing or
    ///   unknown: expected …"), when a column is unknown or named twice, or a required one is missing.
    package static func names(_ header: CSVRow, expected: [String], ignored: [String] = [], required: [String], file: String) throws -> [String] {
        let names = header.fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        let expectedList = expected.joined(separator: ",")
        guard names.contains(where: required.contains) else {
            // The app backend's table has user ids, not study codes: say how to import it.
            let hint =
                names.contains("user_id")
                ? "this looks like the app backend's health_metrics (a user_id column): import it with --from health-metrics --user-map users.csv"
                : "the first line names the columns; \(required.joined(separator: ", ")) are required"
            throw CohortError.invalid("the header is missing or unknown: expected \(expectedList)", file: file, line: 1, hint: hint)
        }
        var seen = Set<String>()
        for (i, name) in names.enumerated() {
            guard expected.contains(name) || ignored.contains(name) else {
                throw CohortError.invalid("unknown column: column \(i + 1) of the header is not a known column", file: file, line: 1,
                    field: "column \(i + 1)", hint: suggestion(for: name, in: expected))
            }
            guard seen.insert(name).inserted else {
                throw CohortError.invalid("column '\(name)' is named twice in the header", file: file, line: 1, field: name,
                    hint: "remove one of the two columns")
            }
        }
        for name in required where !seen.contains(name) {
            throw CohortError.invalid("the header lacks the required column '\(name)'", file: file, line: 1, field: name,
                hint: "header: \(expectedList)")
        }
        return names
    }

    /// "did you mean 'value'?" for a misspelt column (names a column, never the cell), else the list.
    package static func suggestion(for cell: String, in expected: [String]) -> String {
        let list = "columns: \(expected.joined(separator: ","))"
        // Long cells are values, not typos (and the edit distance would cost their length squared).
        guard cell.utf8.count <= 32, let closest = Suggest.closest(to: cell, in: expected) else { return list }
        return "did you mean '\(closest)'? \(list)"
    }
}
