import CohortCore
import Foundation

/// Reads record rows from CSV, NDJSON or a JSON array as column → text, with line numbers.
enum RowSource {
    static func forEachRow(url: URL, format: String, _ body: (Int, [String: String]) throws -> Void) throws {
        switch format {
        case "ndjson": try ndjson(url: url, body)
        case "json": try jsonArray(url: url, body)
        default: try csv(url: url, body)
        }
    }

    static func checkColumn(_ key: String, file: String, line: Int) throws {
        guard RecordImporter.columns.contains(key) else {
            throw CohortError.invalid("unknown column '\(key)'", file: file, line: line, field: key,
                hint: Suggest.closest(to: key, in: RecordImporter.columns).map { "did you mean '\($0)'?" }
                    ?? "columns: \(RecordImporter.columns.joined(separator: ","))")
        }
    }

    static func csv(url: URL, _ body: (Int, [String: String]) throws -> Void) throws {
        let file = url.path
        let reader = try CSVReader(url: url)
        guard let header = try reader.next() else {
            throw CohortError.invalid("the file is empty", file: file, line: 1, hint: "the first line is the header: \(RecordImporter.columns.joined(separator: ","))")
        }
        let names = header.fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        for name in names { try checkColumn(name, file: file, line: 1) }
        if Set(names).count != names.count { throw CohortError.invalid("a column is named twice in the header", file: file, line: 1) }
        for required in ["participant", "kind", "start"] where !names.contains(required) {
            throw CohortError.invalid("the header lacks the required column '\(required)'", file: file, line: 1, field: required,
                hint: "header: \(RecordImporter.columns.joined(separator: ","))")
        }
        while let row = try reader.next() {
            guard row.fields.count == names.count else {
                throw CohortError.invalid("expected \(names.count) fields, found \(row.fields.count)", file: file, line: row.line,
                    hint: "quote fields that contain commas")
            }
            var fields: [String: String] = [:]
            fields.reserveCapacity(names.count)
            for (i, name) in names.enumerated() where !row.fields[i].isEmpty { fields[name] = row.fields[i] }
            try body(row.line, fields)
        }
    }

    static func fields(of object: Any, file: String, line: Int) throws -> [String: String] {
        guard let dict = object as? [String: Any] else {
            throw CohortError.invalid("expected a JSON object with keys \(RecordImporter.columns.joined(separator: ", "))", file: file, line: line)
        }
        var fields: [String: String] = [:]
        for (key, value) in dict {
            try checkColumn(key, file: file, line: line)
            switch value {
            case is NSNull: continue
            case let s as String: if !s.isEmpty { fields[key] = s }
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

    static func ndjson(url: URL, _ body: (Int, [String: String]) throws -> Void) throws {
        let file = url.path
        guard let handle = FileHandle(forReadingAtPath: file) else { throw CohortError(.notFound, "cannot open the file", at: .init(file: file)) }
        defer { try? handle.close() }
        var buffer = Data()
        var line = 0
        var eof = false
        while !eof {
            let chunk = try handle.read(upToCount: 1 << 18) ?? Data()
            if chunk.isEmpty { eof = true } else { buffer.append(chunk) }
            while let newline = buffer.firstIndex(of: 0x0A) ?? (eof && !buffer.isEmpty ? buffer.endIndex : nil) {
                let lineData = buffer[buffer.startIndex..<newline]
                buffer = newline < buffer.endIndex ? Data(buffer[(newline + 1)...]) : Data()
                line += 1
                let trimmed = lineData.filter { $0 != 0x0D }
                if trimmed.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                let object: Any
                do {
                    object = try JSONSerialization.jsonObject(with: Data(trimmed))
                } catch {
                    throw CohortError.invalid("the line is not valid JSON", file: file, line: line, hint: "each line of an NDJSON file is one JSON object")
                }
                try body(line, try fields(of: object, file: file, line: line))
            }
        }
    }

    static func jsonArray(url: URL, _ body: (Int, [String: String]) throws -> Void) throws {
        let file = url.path
        guard let data = FileManager.default.contents(atPath: file) else { throw CohortError(.notFound, "cannot open the file", at: .init(file: file)) }
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
            try body(i + 1, try fields(of: item, file: "\(file)[\(i + 1)]", line: i + 1))
        }
    }
}
