import CohortCore
import Foundation
import Testing

@testable import CohortExport

struct TableWriterTests {
    /// Records awkward for CSV and JSON: empty and missing fields, quotes, commas, line breaks,
    /// whole and fractional values, instants with milliseconds and negative offsets.
    static func records() -> [DeidentifiedRecord] {
        var records: [DeidentifiedRecord] = []
        let texts: [String?] = [nil, "", "plain", "a,b", "say \"hi\"", "line\nbreak\r\n", "Zoë 東京 🙂", "tab\t\u{01}"]
        for (index, text) in texts.enumerated() {
            for kind in [RecordKind.heartRate, .steps, .sleepDuration] {
                var r = DeidentifiedRecord(pseudonym: "K7QF2M4XRB6TNV3D", kind: kind)
                r.start = index == 0 ? nil : Timestamp(epochMilliseconds: 1_741_937_400_000 + Int64(index * 1234), utcOffsetSeconds: Int32(index - 4) * 1800)
                r.end = index % 2 == 0 ? nil : r.start?.adding(days: 1)
                r.value = index == 1 ? nil : [72, 0.5, 10_000, -3.25, 1e-7, 123_456.789, 7][index % 7]
                r.valueLabel = text
                r.unit = kind.canonicalUnit
                r.text = text
                r.source = text
                r.note = text
                records.append(r)
            }
        }
        return records
    }

    /// Writing a record directly gives the bytes of writing its cells (`layout.row`), in both
    /// formats.
    @Test func recordRowsMatchCellRows() throws {
        let root = try ExportFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let layout = TableLayout.family(.biometric, kinds: [.heartRate, .steps, .sleepDuration], policy: ExportFixture.fullPolicy)
        var outputs: [[Data]] = []
        for (index, direct) in [true, false].enumerated() {
            let csv = root.appendingPathComponent("csv\(index)"), json = root.appendingPathComponent("json\(index)")
            try FileManager.default.createDirectory(at: csv, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: json, withIntermediateDirectories: true)
            let writer = try TableWriter(layout: layout, csvDirectory: csv, jsonDirectory: json)
            for r in Self.records() {
                if direct { try writer.write(r) } else { try writer.write(layout.row(r)) }
            }
            #expect(try writer.finish().count == 2)
            outputs.append([
                try Data(contentsOf: csv.appendingPathComponent(layout.name + ".csv")),
                try Data(contentsOf: json.appendingPathComponent(layout.name + ".ndjson")),
            ])
        }
        #expect(outputs[0] == outputs[1])
        let csvRecords = try StrictCSV.parse(Array(outputs[0][0]))
        #expect(csvRecords.count == Self.records().count + 1)
        let lines = String(decoding: outputs[0][1], as: UTF8.self).split(separator: "\n")
        #expect(lines.count == Self.records().count)
        for line in lines { #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil) }
    }
}
