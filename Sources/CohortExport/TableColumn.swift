import CohortCore

/// The Frictionless Table Schema type of a column.
enum ColumnType: String, Sendable, Codable {
    case string, number, integer, date, datetime, year
}

/// One column of an exported table, with what the codebook and `datapackage.json` say about it.
struct TableColumn: Sendable {
    var name: String
    var type: ColumnType
    /// The de-identification transform that produced the column.
    var transform: Transform
    var description: String
    var unit: String? = nil
    var allowedValues: [String]? = nil
    var minimum: Double? = nil
    var maximum: Double? = nil
    var required = false
    /// The regular expression every value matches, for codes that look like numbers (`021`) or
    /// fixed-form identifiers; declared in `datapackage.json` so readers keep them as text.
    var pattern: String? = nil

    /// The codebook's `allowed` text: the values separated by `|`, or `min..max`.
    var allowedText: String {
        if let allowedValues { return allowedValues.joined(separator: "|") }
        if let minimum, let maximum { return NumberText.format(minimum) + ".." + NumberText.format(maximum) }
        return ""
    }
}
