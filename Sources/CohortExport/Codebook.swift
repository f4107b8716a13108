import CohortCore

/// `data/csv/codebook.csv`: one row per column of every table, plus one row per record kind with
/// its code, UCUM unit and range.
enum Codebook {
    static let header = ["variable", "table", "type", "unit", "code_system", "code", "allowed", "description", "transform"]

    /// The codebook rows for `layouts`.
    static func rows(layouts: [TableLayout]) -> [[String]] {
        var rows: [[String]] = []
        for layout in layouts {
            for column in layout.columns {
                rows.append([
                    column.name, layout.name, column.type.rawValue, column.unit ?? "", "", "", column.allowedText, column.description,
                    column.transform.rawValue,
                ])
            }
        }
        for layout in layouts where layout.dataType != nil {
            let valueTransform = layout.transform(of: "value") ?? layout.transform(of: "value_label") ?? .drop
            for kind in layout.kinds {
                let coding = kind.coding
                let range = NumberText.format(kind.range.lowerBound) + ".." + NumberText.format(kind.range.upperBound)
                rows.append([
                    kind.rawValue, layout.name, kind.isInteger ? "integer" : "number", kind.canonicalUnit, coding.system, coding.code,
                    range, kind.summary, valueTransform.rawValue,
                ])
            }
        }
        return rows
    }
}
