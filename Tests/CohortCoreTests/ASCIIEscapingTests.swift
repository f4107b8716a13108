import CohortCore
import Foundation
import Testing

struct ASCIIEscapingTests {
    /// Every quote byte is replaced, also one a combining mark follows (one character with it,
    /// which `replacingOccurrences` leaves alone), and nothing else changes.
    @Test(arguments: ["", "plain", "it's", "''", "'\u{301}", "a'\u{301}b'", "e\u{301}'", "🙂'🙂", "ß'ſ", "'\r\n'"])
    func everyQuoteByteIsReplaced(text: String) {
        let escaped = ASCIIEscaping.replacing(0x27, with: "''", in: text)
        let quotes = text.utf8.filter { $0 == 0x27 }.count
        #expect(escaped.utf8.count == text.utf8.count + quotes)
        // Undoing it byte by byte gives the text back.
        var undone: [UInt8] = []
        var bytes = Array(escaped.utf8)[...]
        while let byte = bytes.popFirst() {
            undone.append(byte)
            if byte == 0x27 { #expect(bytes.popFirst() == 0x27) }
        }
        #expect(undone == Array(text.utf8))
    }

    /// What the byte replacement fixes: Foundation's leaves a quote with a combining mark.
    @Test func characterReplacementMissesAQuoteWithACombiningMark() {
        let text = "a'\u{301}b"
        #expect(text.replacingOccurrences(of: "'", with: "''").utf8.count == text.utf8.count)
        #expect(ASCIIEscaping.replacing(0x27, with: "''", in: text).utf8.count == text.utf8.count + 1)
    }
}
