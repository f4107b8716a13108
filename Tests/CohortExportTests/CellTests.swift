import CohortCore
import Testing

@testable import CohortExport

struct CellTests {
    static let cells: [Cell] = [
        .null, .string(""), .string("plain"), .string("a,b"), .string("say \"hi\""), .string("line\nbreak"), .string("tab\there"),
        .string("Zoë 東京 🙂"), .string("\"\u{301} combining"), .number(0.5), .number(-1013.25), .number(1e-7), .number(.nan),
        .integer(0), .integer(-42), .integer(Int.max), .date(CivilDate(daysSinceEpoch: -1)), .date(CivilDate(daysSinceEpoch: 20_000)),
        .timestamp(Timestamp(epochMilliseconds: 1_741_937_400_123, utcOffsetSeconds: -12_600)), .timestamp(Timestamp(epochMilliseconds: 0)),
        .list([]), .list(["a"]), .list(["wrist", "ring, left", "q\"uote"]),
    ]

    /// The byte writers give exactly the text the string properties give (CSV quoted).
    @Test(arguments: cells)
    func bytesMatchText(cell: Cell) {
        var csv: [UInt8] = []
        cell.appendCSV(to: &csv)
        #expect(String(decoding: csv, as: UTF8.self) == CSVText.field(cell.csvText))
        var json: [UInt8] = []
        cell.appendJSON(to: &json)
        #expect(String(decoding: json, as: UTF8.self) == cell.jsonText)
    }

    /// Where a cell says its JSON value is its CSV field (bare or quoted), the JSON text is
    /// exactly that; numbers, integers, dates and timestamps say so, the other cells do not.
    @Test(arguments: cells + [.number(.infinity), .number(-.infinity), .number(123_456.789), .integer(Int.min)])
    func jsonQuotesCSVHolds(cell: Cell) {
        let csv = CSVText.field(cell.csvText)
        switch cell {
        case .number(let value) where value.isFinite: #expect(cell.jsonQuotesCSV == false)
        case .integer: #expect(cell.jsonQuotesCSV == false)
        case .date, .timestamp: #expect(cell.jsonQuotesCSV == true)
        default: #expect(cell.jsonQuotesCSV == nil)
        }
        if let quoted = cell.jsonQuotesCSV { #expect(cell.jsonText == (quoted ? "\"" + csv + "\"" : csv)) }
    }
}
