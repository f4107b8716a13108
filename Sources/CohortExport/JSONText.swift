import CohortCore

/// Hand-written JSON for NDJSON rows and FHIR resources, so column order and number text are
/// under our control. One escaping rule for both: `"` and `\` escaped, control characters as
/// `\b \f \n \r \t` or `\u00xx`, everything else (`/`, non-ASCII) as it is — what `JSONEncoder`
/// writes with `.withoutEscapingSlashes`.
enum JSONText {
    /// `text` as a JSON string literal (quotes included).
    static func string(_ text: String) -> String {
        // Most values need no escape at all.
        if !text.utf8.contains(where: needsEscape) { return "\"" + text + "\"" }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 8)
        appendString(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `text` as a JSON string literal (quotes included) to `bytes`.
    static func appendString(_ text: String, to bytes: inout [UInt8]) {
        ByteText.withUTF8(text) { appendString(utf8: $0, to: &bytes) }
    }

    /// ``appendString(_:to:)`` for a string's UTF-8.
    private static func appendString(utf8: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        defer { bytes.append(UInt8(ascii: "\"")) }
        // Most strings need no escape: find the first byte that does, eight at a time.
        let clean = cleanPrefixLength(utf8)
        if clean == utf8.count { return bytes.append(contentsOf: utf8) }
        var start = 0
        for i in clean..<utf8.count where needsEscape(utf8[i]) {
            let byte = utf8[i]
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<i]))
            bytes.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
            case 0x0A: bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "t"))
            case 0x08: bytes.append(UInt8(ascii: "b"))
            case 0x0C: bytes.append(UInt8(ascii: "f"))
            default:
                bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]])
            }
            start = i + 1
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The number of leading bytes of `utf8` that need no escape. Words of eight bytes are
    /// tested at once (a byte below 0x20, a `"` or a `\\` in the word), the tail byte by byte.
    static func cleanPrefixLength(_ utf8: UnsafeBufferPointer<UInt8>) -> Int {
        guard let base = utf8.baseAddress else { return 0 }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var i = 0
        while i + 8 <= utf8.count {
            let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            // Each term is non-zero exactly when some byte is below 0x20 / zero (the classic
            // "has less than" / "has zero byte" tests, exact for any byte values).
            let control = (word &- ones &* 0x20) & ~word & highs
            let hits = control | ((quote &- ones) & ~quote & highs) | ((backslash &- ones) & ~backslash & highs)
            if hits != 0 { break }
            i += 8
        }
        while i < utf8.count, !needsEscape(utf8[i]) { i += 1 }
        return i
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }
}
