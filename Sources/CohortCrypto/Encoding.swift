import Foundation

/// Lowercase hexadecimal (base 16) text for bytes.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `bytes` as lowercase hexadecimal, two characters per byte.
    public static func encode(_ bytes: [UInt8]) -> String {
        var text = [UInt8]()
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes spelled by `text` (upper- or lowercase), or `nil` when it is not an even number
    /// of hexadecimal digits.
    public static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 2 == 0 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(characters.count / 2)
        var index = 0
        while index < characters.count {
            guard let high = value(of: characters[index]), let low = value(of: characters[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func value(of character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// RFC 4648 base 32 (alphabet `A–Z 2–7`), without `=` padding.
///
/// Used for pseudonyms: case-insensitive to read aloud, no look-alike `0/O` or `1/I`.
public enum Base32 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// `bytes` in base 32, uppercase, unpadded (⌈8·n/5⌉ characters).
    public static func encode(_ bytes: [UInt8]) -> String {
        var text = [UInt8]()
        text.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                text.append(alphabet[Int((buffer >> UInt32(bits)) & 0x1f)])
            }
        }
        if bits > 0 {
            text.append(alphabet[Int((buffer << UInt32(5 - bits)) & 0x1f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// RFC 4648 base 64 with padding (the standard alphabet), via Foundation.
public enum Base64 {
    /// `bytes` in base 64 on one line, padded with `=`.
    public static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }

    /// The bytes spelled by padded base-64 `text`, or `nil` when it is not valid base 64.
    /// Line breaks and other whitespace are ignored.
    public static func decode(_ text: String) -> [UInt8]? {
        let compact = String(text.unicodeScalars.filter { !CharacterSet.whitespacesAndNewlines.contains($0) })
        return Data(base64Encoded: compact).map { [UInt8]($0) }
    }
}
