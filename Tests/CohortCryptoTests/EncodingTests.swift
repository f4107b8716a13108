import Testing
import CohortCrypto

struct HexTests {
    @Test func encodesLowercase() {
        #expect(Hex.encode([0x00, 0x0f, 0xa0, 0xff]) == "000fa0ff")
        #expect(Hex.encode([]) == "")
    }

    @Test func decodesEitherCase() {
        #expect(Hex.decode("000FA0ff") == [0x00, 0x0f, 0xa0, 0xff])
        #expect(Hex.decode("") == [])
    }

    @Test(arguments: ["abc", "zz", "0g", " 00", "0x00"])
    func rejectsMalformed(_ text: String) {
        #expect(Hex.decode(text) == nil)
    }
}

/// RFC 4648 section 10 vectors, without padding.
struct Base32Tests {
    @Test(arguments: [
        ("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"), ("fooba", "MZXW6YTB"),
        ("foobar", "MZXW6YTBOI"),
    ])
    func rfc4648(_ input: String, _ expected: String) {
        #expect(Base32.encode(Array(input.utf8)) == expected)
    }

    @Test func tenBytesGiveSixteenCharacters() {
        // Pseudonyms truncate HMACs to 80 bits: exactly 16 characters, no padding.
        #expect(Base32.encode([UInt8](repeating: 0xff, count: 10)) == "7777777777777777")
    }
}

/// RFC 4648 section 10 vectors.
struct Base64Tests {
    @Test(arguments: [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foobar", "Zm9vYmFy")])
    func rfc4648(_ input: String, _ expected: String) {
        #expect(Base64.encode(Array(input.utf8)) == expected)
        #expect(Base64.decode(expected) == Array(input.utf8))
    }

    @Test func ignoresLineBreaksButRejectsGarbage() {
        #expect(Base64.decode("Zm9v\nYmFy\n") == Array("foobar".utf8))
        #expect(Base64.decode("Zm9v!!") == nil)
    }
}
