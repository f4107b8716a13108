import Foundation
/// RFC 4180 text: fields quoted when they contain a comma, a quote, CR or LF, inner quotes
/// doubled, records ended by CRLF.
package enum CSVText {
    /// `field` as one CSV field.
    public static func field(_ field: String) -> String {
        guard needsQuotes(field) else { return field }
        var bytes: [UInt8] = []
        appendField(field, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the bytes of `field(field)` to `bytes` (no intermediate string for plain fields).
    package static func appendField(_ field: String, to bytes: inout [UInt8]) {
        ByteText.withUTF8(field) { appendField(utf8: $0, to: &bytes) }
    }

    /// ``appendField(_:to:)`` for a field's UTF-8.
    private static func appendField(utf8: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        // One pass over the contiguous UTF-8 (not a `UTF8View` walk to check, then another to copy).
        var plain = true
        for byte in utf8 where byte == 0x2C || byte == 0x22 || byte == 0x0D || byte == 0x0A {
            plain = false
            break
        }
        if plain { return bytes.append(contentsOf: utf8) }
        // Quoted, each quote byte doubled. Not `replacingOccurrences(of: "\"", …)`: that compares
        // characters and left a quote followed by a combining mark undoubled, ending the field
        // early; it also made an `NSString` per field (issue 28).
        bytes.reserveCapacity(bytes.count + utf8.count + 2)
        bytes.append(0x22)
        for byte in utf8 {
            bytes.append(byte)
            if byte == 0x22 { bytes.append(0x22) }
        }
        bytes.append(0x22)
    }

    /// Whether `field` holds a comma, a quote, CR or LF.
    private static func needsQuotes(_ field: String) -> Bool {
        field.utf8.contains { $0 == 0x2C || $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }
    }

    /// One CSV record, CRLF included.
    public static func record(_ fields: [String]) -> String {
        fields.map(field).joined(separator: ",") + "\r\n"
    }
}
