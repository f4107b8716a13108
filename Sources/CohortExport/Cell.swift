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

    /// Appends the CSV field (quoted when needed): the bytes of `CSVText.field(csvText)`.
    func appendCSV(to bytes: inout [UInt8]) {
        switch self {
        case .null: break
        case .string(let text): Self.appendCSV(string: text, to: &bytes)
        case .number(let value): bytes.append(contentsOf: NumberText.format(value).utf8)
        case .integer(let value): ByteText.appendInt(value, to: &bytes)
        case .date(let date): ByteText.appendDate(date, to: &bytes)
        case .timestamp(let instant): ByteText.appendTimestamp(instant, to: &bytes)
        case .list: CSVText.appendField(csvText, to: &bytes)
        }
    }

    /// For the cells whose JSON value is their CSV field's bytes (finite numbers, integers:
    /// bare; dates, timestamps: in quotes), whether it is quoted; nil for the others. Lets a
    /// writer of both format such a value once (`CellTests` checks the claim).
    var jsonQuotesCSV: Bool? {
        switch self {
        case .number(let value): value.isFinite ? false : nil
        case .integer: false
        case .date, .timestamp: true
        case .null, .string, .list: nil
        }
    }

    /// Appends the JSON value: the bytes of `jsonText`.
    func appendJSON(to bytes: inout [UInt8]) {
        switch self {
        case .null: Self.appendNull(to: &bytes)
        case .string(let text): Self.appendJSON(string: text, to: &bytes)
        case .number(let value):
            if value.isFinite { bytes.append(contentsOf: NumberText.format(value).utf8) } else { Self.appendNull(to: &bytes) }
        case .integer(let value): ByteText.appendInt(value, to: &bytes)
        case .date(let date):
            bytes.append(UInt8(ascii: "\""))
            ByteText.appendDate(date, to: &bytes)
            bytes.append(UInt8(ascii: "\""))
        case .timestamp(let instant):
            bytes.append(UInt8(ascii: "\""))
            ByteText.appendTimestamp(instant, to: &bytes)
            bytes.append(UInt8(ascii: "\""))
        case .list(let items):
            bytes.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                JSONText.appendString(item, to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        }
    }

    /// What `Cell.string(text).appendCSV(to:)` appends, for writers that hold the text
    /// without a cell.
    static func appendCSV(string text: String, to bytes: inout [UInt8]) { CSVText.appendField(text, to: &bytes) }

    /// What `Cell.string(text).appendJSON(to:)` appends.
    static func appendJSON(string text: String, to bytes: inout [UInt8]) { JSONText.appendString(text, to: &bytes) }

    /// Appends `null`, byte by byte: appending a static array of its bytes cost a lazy-global
    /// check, a retain and a release per null (issue 28).
    private static func appendNull(to bytes: inout [UInt8]) {
        bytes.append(0x6E)
        bytes.append(0x75)
        bytes.append(0x6C)
        bytes.append(0x6C)
    }

    /// A number cell: an integer when `integral` and the value is whole.
    static func numeric(_ value: Double?, integral: Bool) -> Cell {
        guard let value else { return .null }
        if integral, value == value.rounded(), abs(value) < 1e15 { return .integer(Int(value)) }
        return .number(value)
    }
}
