/// ASCII characters replaced in text byte by byte, for quoting and escaping (SQL, POSIX shell,
/// XHTML).
///
/// `String.replacingOccurrences(of:with:)` compares characters: a quote followed by a combining
/// mark (`"\u{301}`) is one character, which is not `"`, so the quote was left as it was and
/// ended a quoted identifier, literal or shell word early. In UTF-8 an ASCII byte is only ever
/// that character, so replacing bytes holds for any text.
package enum ASCIIEscaping {
    /// `text` with every `character` (an ASCII byte) replaced by `replacement`.
    package static func replacing(_ character: UInt8, with replacement: String, in text: String) -> String {
        replacing([character: replacement], in: text)
    }

    /// `text` with each byte that is a key of `replacements` (ASCII bytes) replaced by its value,
    /// in one pass (so a replacement is never replaced again).
    package static func replacing(_ replacements: [UInt8: String], in text: String) -> String {
        precondition(replacements.keys.allSatisfy { $0 < 0x80 }, "ASCIIEscaping replaces ASCII characters only")
        guard text.utf8.contains(where: { replacements[$0] != nil }) else { return text }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 16)
        for byte in text.utf8 {
            if let replacement = replacements[byte] {
                bytes.append(contentsOf: replacement.utf8)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
