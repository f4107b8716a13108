/// Encoding and decoding of ustar header blocks and pax records (POSIX.1-2001 `pax` format).
enum TarHeader {
    /// The largest size an 11-digit octal size field holds (8 GiB − 1).
    static let maximumOctalSize: UInt64 = 0o77777777777

    // Field offsets and widths in a 512-byte ustar header.
    static let nameField = 0..<100
    static let modeField = 100..<108
    static let uidField = 108..<116
    static let gidField = 116..<124
    static let sizeField = 124..<136
    static let mtimeField = 136..<148
    static let checksumField = 148..<156
    static let typeflagOffset = 156
    static let magicField = 257..<263
    static let versionField = 263..<265
    static let devMajorField = 329..<337
    static let devMinorField = 337..<345
    static let prefixField = 345..<500

    /// A ustar header block. `name` must fit in 100 bytes.
    static func ustar(name: [UInt8], size: UInt64, mtime: Int64, typeflag: UInt8, mode: Int) -> [UInt8] {
        var block = [UInt8](repeating: 0, count: 512)
        block.replaceSubrange(0..<min(name.count, 100), with: name.prefix(100))
        putOctal(&block, modeField, UInt64(mode))
        putOctal(&block, uidField, 0)
        putOctal(&block, gidField, 0)
        putOctal(&block, sizeField, size)
        putOctal(&block, mtimeField, UInt64(max(mtime, 0)))
        block[typeflagOffset] = typeflag
        block.replaceSubrange(magicField, with: Array("ustar".utf8) + [0])
        block.replaceSubrange(versionField, with: Array("00".utf8))
        putOctal(&block, devMajorField, 0)
        putOctal(&block, devMinorField, 0)
        // uname, gname, linkname and prefix stay empty (all NUL).
        let sum = checksum(block)
        var text = Array(String(sum, radix: 8).utf8)
        text = [UInt8](repeating: UInt8(ascii: "0"), count: max(0, 6 - text.count)) + text
        block.replaceSubrange(checksumField, with: text + [0, UInt8(ascii: " ")])
        return block
    }

    /// The header checksum: the byte sum with the checksum field counted as eight spaces.
    static func checksum(_ block: [UInt8]) -> UInt64 {
        var sum: UInt64 = 0
        for index in 0..<512 {
            sum += checksumField.contains(index) ? 32 : UInt64(block[index])
        }
        return sum
    }

    /// Writes `value` as zero-padded octal digits and a terminating NUL.
    static func putOctal(_ block: inout [UInt8], _ field: Range<Int>, _ value: UInt64) {
        var digits = Array(String(value, radix: 8).utf8)
        let width = field.count - 1
        digits = [UInt8](repeating: UInt8(ascii: "0"), count: max(0, width - digits.count)) + digits
        block.replaceSubrange(field, with: digits.suffix(width) + [0])
    }

    /// Reads an octal numeric field (leading spaces, then digits, ended by NUL or space); nil
    /// when it holds anything else.
    static func octal(_ block: [UInt8], _ field: Range<Int>) -> UInt64? {
        var value: UInt64 = 0
        var seenDigit = false
        var ended = false
        for byte in block[field] {
            if ended {
                guard byte == 0 || byte == 32 else { return nil }
                continue
            }
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                let (shifted, overflow) = value.multipliedReportingOverflow(by: 8)
                guard !overflow else { return nil }
                value = shifted + UInt64(byte - UInt8(ascii: "0"))
                seenDigit = true
            case 32 where !seenDigit:
                continue
            case 0, 32:
                ended = true
            default:
                return nil
            }
        }
        return value
    }

    /// A NUL-terminated text field's bytes.
    static func text(_ block: [UInt8], _ field: Range<Int>) -> [UInt8] {
        Array(block[field].prefix { $0 != 0 })
    }

    /// One pax record: `"<length> <key>=<value>\n"`, where the length counts itself.
    static func paxRecord(key: String, value: [UInt8]) -> [UInt8] {
        let body = Array(" \(key)=".utf8) + value + [UInt8(ascii: "\n")]
        var length = body.count + 1
        while String(length).utf8.count + body.count != length { length = String(length).utf8.count + body.count }
        return Array(String(length).utf8) + body
    }

    /// Parses pax records into key → value bytes; nil when malformed.
    static func parsePax(_ bytes: [UInt8]) -> [String: [UInt8]]? {
        var result: [String: [UInt8]] = [:]
        var index = 0
        while index < bytes.count {
            guard let space = bytes[index...].firstIndex(of: 32) else { return nil }
            guard let length = Int(String(decoding: bytes[index..<space], as: UTF8.self)), length > 0,
                index + length <= bytes.count, bytes[index + length - 1] == UInt8(ascii: "\n")
            else { return nil }
            let record = bytes[(space + 1)..<(index + length - 1)]
            guard let equals = record.firstIndex(of: UInt8(ascii: "=")) else { return nil }
            result[String(decoding: record[record.startIndex..<equals], as: UTF8.self)] = Array(record[(equals + 1)...])
            index += length
        }
        return result
    }

    /// A 100-byte ASCII stand-in for a name that needs a pax `path` record (what tools without
    /// pax support would show): non-ASCII bytes become `_`, and long names are cut.
    static func asciiFallback(_ name: [UInt8], isDirectory: Bool) -> [UInt8] {
        let ascii = name.map { $0 >= 0x80 ? UInt8(ascii: "_") : $0 }
        guard ascii.count > 100 else { return ascii }
        return isDirectory ? Array(ascii.prefix(99)) + [UInt8(ascii: "/")] : Array(ascii.prefix(100))
    }

    /// The name of the pax header entry for `name`: `<top>/PaxHeaders/<base>`, ASCII, ≤ 100
    /// bytes, fixed (no process id), so archives stay reproducible.
    static func paxHeaderName(for name: [UInt8]) -> [UInt8] {
        let parts = name.split(separator: UInt8(ascii: "/"))
        let top = parts.first.map(Array.init) ?? []
        let base = parts.last.map(Array.init) ?? []
        let joined = top + Array("/PaxHeaders/".utf8) + base
        return Array(asciiFallback(joined, isDirectory: false).prefix(100))
    }
}
