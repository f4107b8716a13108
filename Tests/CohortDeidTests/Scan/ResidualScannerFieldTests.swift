import CohortCore
import Foundation
import Testing

@testable import CohortDeid

/// The scan decides per value whether it is free text and names its field without building a
/// `String` per value (issue 28, fourth round): column flags once per CSV header, the JSON key
/// path as bytes. These tests hold that to the `String` rules it replaced
/// (``ResidualScanner/freeTextColumns``, ``ResidualScanner/isFreeTextJSONPath(_:)``,
/// ``ResidualScanner/fixedJSONKeys``), computed here by their own route.
struct ResidualScannerFieldTests {
    static let keyPieces: [[UInt8]] = [
        "note", "text", "note.text", ".note", "valueString", "medicationCodeableConcept", "medicationCodeableConcept.text", "x", "",
        "display", "coding", "code", "unit", "id", "source", "participant", "NOTE", "Text", "é", "\u{0600}", "\u{0301}", "\r", "\n",
        "valuestring", "e", "note ", " text", "a.b", "ot", "n",
    ].map { Array($0.utf8) } + [[0xFF], [0xC3], [0xE2, 0x80], [0x0D, 0x0A]]

    /// A key's class read from its bytes is the `String` rule's, for every known key and keys one
    /// byte away from one (longer, shorter, last or ninth byte changed).
    @Test func keyClassAgreesWithTheStringRule() {
        var keys = ResidualScanner.fixedJSONKeys.sorted() + ["display", "coding", "", "é", "resourceTypé", "codé"]
        for word in Array(keys) {
            keys += [word + "x", String(word.dropLast()), String(word.dropLast()) + "?"]
            if word.count > 8 { keys.append(String(word.prefix(8)) + "#" + String(word.dropFirst(9))) }
        }
        for key in keys {
            let expected: ResidualScanner.ValueScanner.KeyClass =
                key.isEmpty ? .none
                : ResidualScanner.fixedJSONKeys.contains(key) ? .fixed : key == "display" ? .display : key == "coding" ? .coding : .other
            let found = Array(key.utf8).withUnsafeBufferPointer { ResidualScanner.ValueScanner.keyClass($0) }
            #expect(found == expected, "\(key.debugDescription)")
        }
    }

    /// The byte rule equals the `String` rule for random key stacks (joined as the scan joins them).
    @Test(arguments: [1 as UInt64, 2, 3])
    func freeTextPathAgreesWithTheStringRule(seed: UInt64) {
        var g = SeededRandom(seed: seed)
        var freeText = 0
        for _ in 0..<20_000 {
            var keys: [[UInt8]] = []
            for _ in 0..<Int.random(in: 0...4, using: &g) {
                var key: [UInt8] = []
                for _ in 0..<Int.random(in: 1...3, using: &g) { key += Self.keyPieces.randomElement(using: &g) ?? [] }
                keys.append(key)
            }
            let values = ResidualScanner.ValueScanner(scanner: ResidualScanner(roster: []), format: .ndjson)
            // The keys as the scan reads them: an object per key (an array between some), and
            // containers opened and closed after them whose keys must leave the path again.
            for (index, key) in keys.enumerated() {
                if index % 2 == 1 { values.open(object: false) }
                values.open(object: true)
                key.withUnsafeBufferPointer { values.setKey($0) }
            }
            for stale in ["note", "text"] {
                values.open(object: true)
                Array(stale.utf8).withUnsafeBufferPointer { values.setKey($0) }
            }
            values.open(object: false)
            for _ in 0..<3 { values.close() }
            let path = keys.filter { !$0.isEmpty }.map { String(decoding: $0, as: UTF8.self) }.joined(separator: ".")
            #expect(String(decoding: values.pathBytes, as: UTF8.self) == path)
            #expect(values.keyPath() == path)
            let expected = ResidualScanner.isFreeTextJSONPath(path)
            if expected { freeText += 1 }
            #expect(ResidualScanner.ValueScanner.isFreeTextPath(values.pathBytes) == expected, "\(path.debugDescription)")
            // Fixed vocabulary: the last non-empty key, `display` only inside a `coding`.
            let last = keys.last { !$0.isEmpty }.map { String(decoding: $0, as: UTF8.self) }
            let isFixed =
                last.map { ResidualScanner.fixedJSONKeys.contains($0) || ($0 == "display" && keys.contains(Array("coding".utf8))) } ?? false
            #expect(values.isFixedField() == isFixed, "\(path.debugDescription)")
        }
        #expect(freeText > 1_000)
    }

    /// A whole scan: every CSV cell and JSON string value is counted as free text, checked and
    /// named exactly as the `String` rules say (header names, `column N` past the header, key paths).
    @Test func fieldsAndCountsFollowTheStringRules() throws {
        let roster = PlantedRoster.participants
        let scanner = ResidualScanner(roster: roster, threads: 1)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("deid-fields-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = ScanTextGenerator(roster: roster, seed: 77)
        let header = ["participant", "text", "note", "source", "value"]
        var csv = header.joined(separator: ",") + "\n"
        var json = ""
        var expectedFindings: [String] = []
        var expectedValues = 0
        var expectedFreeText = 0
        var previousCells: [String] = []
        var previousValue = ""
        for line in 1...600 {
            // CSV: up to two cells past the header (named `column N`, not free text).
            // Half the cells repeat the row above's (the scan remembers each column's last value).
            let cells = (0..<Int.random(in: 1...7, using: &generator.g)).map { column in
                column < previousCells.count && generator.chance(50)
                    ? previousCells[column] : generator.line().replacingOccurrences(of: "\"", with: "")
            }
            previousCells = cells
            csv += cells.map { "\"\($0)\"" }.joined(separator: ",") + "\n"
            for (column, cell) in cells.enumerated() where !cell.isEmpty {
                let name = column < header.count ? header[column] : "column \(column + 1)"
                let isFree = ResidualScanner.freeTextColumns.contains(name)
                expectedValues += 1
                if isFree { expectedFreeText += 1 }
                var kinds = scanner.kinds(inLine: cell, freeText: isFree)
                if kinds.contains(.phone), !isFree, Array(cell.utf8).withUnsafeBufferPointer({ ResidualScanner.isShortQuantity($0) }) {
                    kinds.remove(.phone)
                }
                expectedFindings += kinds.map { "a.csv:\(line + 1):\(name):\($0.rawValue)" }
            }
            // NDJSON: one string value under a random nesting of keys.
            let keys = (0..<Int.random(in: 1...3, using: &generator.g)).map { _ in
                generator.pick(["note", "text", "valueString", "medicationCodeableConcept", "source", "device", "display", "coding"])
            }
            // The same value under another key path too (free text or not): remembered per value number.
            let value =
                generator.chance(50) ? previousValue : generator.line().replacingOccurrences(of: "\\", with: "").replacingOccurrences(of: "\"", with: "")
            previousValue = value
            json += keys.reduce("\"\(value)\"") { inner, key in "{\"\(key)\":\(inner)}" }.description + "\n"
            let path = keys.reversed().joined(separator: ".")
            let last = keys.first ?? ""
            let fixed = ResidualScanner.fixedJSONKeys.contains(last) || (last == "display" && keys.contains("coding"))
            guard !value.isEmpty, !fixed else { continue }
            let isFree = ResidualScanner.isFreeTextJSONPath(path)
            expectedValues += 1
            if isFree { expectedFreeText += 1 }
            expectedFindings += scanner.kinds(inLine: value, isJSON: true, freeText: isFree).map { "b.ndjson:\(line):\(path):\($0.rawValue)" }
        }
        try Data(csv.utf8).write(to: directory.appendingPathComponent("a.csv"))
        try Data(json.utf8).write(to: directory.appendingPathComponent("b.ndjson"))
        let result = try scanner.scan(directory: directory)
        let found = result.findings.map { "\($0.file):\($0.line):\($0.field ?? "-"):\($0.kind.rawValue)" }
        #expect(found.sorted() == expectedFindings.sorted())
        #expect(result.valuesScanned == expectedValues)
        #expect(result.freeTextValues == expectedFreeText)
        #expect(expectedFindings.count > 100)
        #expect(expectedFreeText > 300)
    }
}
