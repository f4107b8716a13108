/// A strict RFC 4180 reader for tests: CRLF record ends only, quotes only around whole fields,
/// no BOM, the same width on every record. Throws on anything else.
enum StrictCSV {
    struct Problem: Error, CustomStringConvertible {
        var description: String
    }

    static func parse(_ bytes: [UInt8]) throws -> [[String]] {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { throw Problem(description: "BOM") }
        guard String(validating: bytes, as: UTF8.self) != nil else { throw Problem(description: "not UTF-8") }
        var records: [[String]] = []
        var fields: [String] = []
        var field: [UInt8] = []
        var i = 0
        let n = bytes.count
        guard n > 0, bytes.suffix(2) == [0x0D, 0x0A] else { throw Problem(description: "last record not ended by CRLF") }
        while i < n {
            field.removeAll()
            if bytes[i] == 0x22 {
                i += 1
                while true {
                    guard i < n else { throw Problem(description: "unclosed quote") }
                    if bytes[i] == 0x22 {
                        if i + 1 < n, bytes[i + 1] == 0x22 {
                            field.append(0x22)
                            i += 2
                            continue
                        }
                        i += 1
                        break
                    }
                    field.append(bytes[i])
                    i += 1
                }
                guard i < n, bytes[i] == 0x2C || bytes[i] == 0x0D else { throw Problem(description: "text after closing quote") }
            } else {
                while i < n, bytes[i] != 0x2C, bytes[i] != 0x0D, bytes[i] != 0x0A {
                    if bytes[i] == 0x22 { throw Problem(description: "quote in unquoted field") }
                    field.append(bytes[i])
                    i += 1
                }
                if i < n, bytes[i] == 0x0A { throw Problem(description: "bare LF") }
            }
            fields.append(String(decoding: field, as: UTF8.self))
            if bytes[i] == 0x2C {
                i += 1
                continue
            }
            guard i + 1 < n, bytes[i + 1] == 0x0A else { throw Problem(description: "bare CR") }
            i += 2
            records.append(fields)
            fields = []
        }
        guard let width = records.first?.count else { throw Problem(description: "no header") }
        for (index, record) in records.enumerated() where record.count != width {
            throw Problem(description: "record \(index) has \(record.count) fields, header \(width)")
        }
        return records
    }
}
