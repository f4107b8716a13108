import CohortCore
package import Foundation
import CohortIO

/// Reads record rows from CSV, NDJSON or a JSON array, with line numbers. Rows come as byte
/// slices (`RecordFields`), not a dictionary of strings per row: this is the import hot path.
///
/// Caps (hostile or broken files are refused in one pass, and errors never quote the file):
/// a field (CSV cell or JSON value) at most `CSVReader.maxFieldBytes` (64 KiB), a CSV row or an
/// NDJSON line at most `maxLineBytes` (1 MiB), a `.json` file at most `maxJSONFileBytes` (256 MiB;
/// it is parsed whole — use NDJSON for more). JSON syntax errors name line and column.
package enum RowSource {
    /// The longest NDJSON line accepted.
    package static let maxLineBytes = CSVReader.maxRowBytes
    /// The largest `.json` (array) file accepted.
    package static let maxJSONFileBytes = 256 << 20

    package static func forEachRow(url: URL, format: String, _ body: (Int, RecordFields) throws -> Void) throws {
        switch format {
        case "ndjson": try ndjson(url: url, body)
        case "json": try jsonArray(url: url, body)
        default: try csv(url: url, body)
        }
    }

    /// Refuses a JSON key that is not a record column, without quoting it (a key can be a value
    /// pasted in the wrong place); the hint suggests the closest column.
    package static func checkColumn(_ key: String, file: String, line: Int) throws {
        guard RecordColumns.names.contains(key) else {
            throw CohortError.invalid("unknown column: a key of the object is not a record column", file: file, line: line,
                hint: InputHeader.suggestion(for: key, in: RecordColumns.names))
        }
    }

    package static func csv(url: URL, _ body: (Int, RecordFields) throws -> Void) throws {
        let file = url.path
        let reader = try CSVReader(url: url)
        guard let header = try reader.next() else {
            throw CohortError.invalid("the file is empty", file: file, line: 1, hint: "the first line is the header: \(RecordColumns.names.joined(separator: ","))")
        }
        // A rejects file (`--rejects`), once fixed, imports as it is: its `line`, `field` and
        // `reason` columns describe the old problem and are ignored.
        let names = try InputHeader.names(
            header, expected: RecordColumns.names, ignored: RecordColumns.rejectsAnnotations, required: ["participant", "kind", "start"],
            file: file)
        // Field i of a row → its column's span slots (-1: an ignored annotation column).
        let slots = names.map { name in RecordFields.Column(name: name).map { 2 * $0.rawValue } ?? -1 }
        var spans = [Int](repeating: -1, count: 2 * RecordFields.Column.allCases.count)
        while try reader.advance() {
            guard reader.fieldCount == names.count else {
                throw CohortError.invalid("expected \(names.count) fields, found \(reader.fieldCount)", file: file, line: reader.rowLine,
                    hint: "quote fields that contain commas")
            }
            try reader.withCurrentRow { bytes, ends in
                var start = 0
                for (slot, end) in zip(slots, ends) {
                    guard slot >= 0 else {
                        start = end
                        continue
                    }
                    // An empty field is an absent value.
                    spans[slot] = end > start ? start : -1
                    spans[slot + 1] = end
                    start = end
                }
                try spans.withUnsafeBufferPointer { try body(reader.rowLine, RecordFields(bytes: bytes, spans: $0)) }
            }
        }
    }

    package static func fields(of object: Any, file: String, line: Int) throws -> [String: String] {
        guard let dict = object as? [String: Any] else {
            throw CohortError.invalid("expected a JSON object with keys \(RecordColumns.names.joined(separator: ", "))", file: file, line: line)
        }
        var fields: [String: String] = [:]
        for (key, value) in dict {
            try checkColumn(key, file: file, line: line)
            switch value {
            case is NSNull: continue
            case let s as String:
                guard s.utf8.count <= CSVReader.maxFieldBytes else {
                    throw CohortError.invalid("the value is longer than \(CSVReader.maxFieldBytes / 1024) KiB", file: file, line: line, field: key,
                        hint: "values are limited to \(CSVReader.maxFieldBytes / 1024) KiB")
                }
                if !s.isEmpty { fields[key] = s }
            case let n as NSNumber:
                if String(cString: n.objCType) == "c" {
                    throw CohortError.invalid("expected a number or text, found true/false", file: file, line: line, field: key)
                }
                fields[key] = n.stringValue
            default:
                throw CohortError.invalid("expected a number or text, found a nested value", file: file, line: line, field: key)
            }
        }
        return fields
    }

    package static func ndjson(url: URL, _ body: (Int, RecordFields) throws -> Void) throws {
        let file = url.path
        var parser = NDJSONLineParser()
        // Lines come without their line end (`\n` or `\r\n`), in place in the reader's buffer.
        try LineReader.forEachLine(of: url, maxLineBytes: maxLineBytes) { line, bytes in
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
            if try parser.parse(bytes, { try body(line, $0) }) { return }
            // Anything the fast parser does not take (escapes, non-ASCII text, exponents,
            // true/false, nesting, errors…) goes through JSONSerialization, as it always did,
            // after a syntax check that names the column of the first error.
            if let problem = JSONSyntax.firstProblem(bytes) {
                let column = JSONSyntax.position(of: problem.offset, in: bytes).column
                throw CohortError.invalid("the line is not valid JSON at column \(column): expected \(problem.expected)", file: file, line: line,
                    hint: "each line of an NDJSON file is one JSON object")
            }
            let object: Any
            do {
                object = try JSONSerialization.jsonObject(with: Data(bytes.filter { $0 != 0x0D }))
            } catch {
                throw CohortError.invalid("the line is not valid JSON", file: file, line: line, hint: "each line of an NDJSON file is one JSON object")
            }
            try RecordFields.with(try fields(of: object, file: file, line: line)) { try body(line, $0) }
        }
    }

    package static func jsonArray(url: URL, _ body: (Int, RecordFields) throws -> Void) throws {
        let file = url.path
        let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.intValue ?? 0
        guard size <= maxJSONFileBytes else {
            throw CohortError.invalid("the .json file is larger than \(maxJSONFileBytes >> 20) MiB", file: file,
                hint: "write the records as NDJSON (.ndjson, one object per line), which is read line by line")
        }
        guard let data = FileManager.default.contents(atPath: file) else { throw CohortError(.notFound, "cannot open the file", at: .init(file: file)) }
        if let (line, column, expected) = data.withUnsafeBytes({ raw -> (Int, Int, String)? in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard let problem = JSONSyntax.firstProblem(bytes) else { return nil }
            let position = JSONSyntax.position(of: problem.offset, in: bytes)
            return (position.line, position.column, problem.expected)
        }) {
            throw CohortError.invalid("the file is not valid JSON at line \(line), column \(column): expected \(expected)", file: file, line: line,
                hint: "a .json file holds an array of objects; use .ndjson for one object per line")
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw CohortError.invalid("the file is not valid JSON", file: file, hint: "a .json file holds an array of objects; use .ndjson for one object per line")
        }
        guard let array = object as? [Any] else {
            throw CohortError.invalid("expected a JSON array of record objects", file: file, line: 1)
        }
        for (i, item) in array.enumerated() {
            // JSON arrays have no line numbers of their own: name the element (1-based).
            try RecordFields.with(try fields(of: item, file: "\(file)[\(i + 1)]", line: i + 1)) { try body(i + 1, $0) }
        }
    }
}
