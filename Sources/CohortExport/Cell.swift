import CohortCore

/// One value of a table row, typed so CSV and NDJSON can each write it their way.
enum Cell: Sendable, Equatable {
    case null
    case string(String)
    case number(Double)
    case integer(Int)
    case date(CivilDate)
    case timestamp(Timestamp)
    /// Several strings: `;`-separated in CSV, an array in JSON.
    case list([String])

    /// The CSV field text (before quoting).
    var csvText: String {
        switch self {
        case .null: ""
        case .string(let text): text
        case .number(let value): NumberText.format(value)
        case .integer(let value): String(value)
        case .date(let date): date.description
        case .timestamp(let instant): instant.iso8601
        case .list(let items): items.joined(separator: ";")
        }
    }

    /// The JSON value text.
    var jsonText: String {
        switch self {
        case .null: "null"
        case .string(let text): JSONText.string(text)
        case .number(let value): value.isFinite ? NumberText.format(value) : "null"
        case .integer(let value): String(value)
        case .date(let date): JSONText.string(date.description)
        case .timestamp(let instant): JSONText.string(instant.iso8601)
        case .list(let items): "[" + items.map(JSONText.string).joined(separator: ",") + "]"
        }
    }

    /// A number cell: an integer when `integral` and the value is whole.
    static func numeric(_ value: Double?, integral: Bool) -> Cell {
        guard let value else { return .null }
        if integral, value == value.rounded(), abs(value) < 1e15 { return .integer(Int(value)) }
        return .number(value)
    }
}
