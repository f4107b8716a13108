/// One ASCII character replaced in text byte by byte, for quoting (SQL, POSIX shell).
///
/// `String.replacingOccurrences(of:with:)` compares characters: a quote followed by a combining
/// mark (`"\u{301}`) is one character, which is not `"`, so the quote was left as it was and
/// ended a quoted identifier, literal or shell word early. In UTF-8 an ASCII byte is only ever
/// that character, so replacing bytes holds for any text.
package enum ASCIIEscaping {
    /// `text` with every `character` (an ASCII byte) replaced by `replacement`.
    package static func replacing(_ character: UInt8, with replacement: String, in text: String) -> String {
        precondition(character < 0x80, "ASCIIEscaping replaces ASCII characters only")
        guard text.utf8.contains(character) else { return text }
        let replacementBytes = Array(replacement.utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 2 * replacementBytes.count)
        for byte in text.utf8 {
            if byte == character {
                bytes.append(contentsOf: replacementBytes)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
