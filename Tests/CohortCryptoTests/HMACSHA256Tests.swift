import Testing
import CohortCrypto

/// RFC 4231 section 4 test cases 1–7 for HMAC-SHA-256.
struct HMACSHA256Tests {
    struct Vector: Sendable, CustomTestStringConvertible {
        var name: String
        var key: [UInt8]
        var data: [UInt8]
        /// Expected MAC; shorter than 32 bytes when the RFC truncates it (case 5).
        var mac: String
        var testDescription: String { name }
    }

    static let vectors: [Vector] = [
        Vector(
            name: "case 1", key: [UInt8](repeating: 0x0b, count: 20), data: Array("Hi There".utf8),
            mac: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        Vector(
            name: "case 2", key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8),
            mac: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        Vector(
            name: "case 3", key: [UInt8](repeating: 0xaa, count: 20), data: [UInt8](repeating: 0xdd, count: 50),
            mac: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        Vector(
            name: "case 4", key: Array(1...25), data: [UInt8](repeating: 0xcd, count: 50),
            mac: "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        Vector(
            name: "case 5 (truncated to 128 bits)", key: [UInt8](repeating: 0x0c, count: 20),
            data: Array("Test With Truncation".utf8), mac: "a3b6167473100ee06e0c796c2955552b"),
        Vector(
            name: "case 6", key: [UInt8](repeating: 0xaa, count: 131),
            data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            mac: "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        Vector(
            name: "case 7", key: [UInt8](repeating: 0xaa, count: 131),
            data: Array(
                ("This is a test using a larger than block-size key and a larger than block-size data. "
                    + "The key needs to be hashed before being used by the HMAC algorithm.").utf8),
            mac: "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ]

    @Test(arguments: vectors)
    func rfc4231(_ vector: Vector) {
        let code = HMACSHA256.authenticationCode(key: vector.key, message: vector.data)
        #expect(code.count == 32)
        let expected = hex(vector.mac)
        #expect(Array(code.prefix(expected.count)) == expected)
    }

    @Test func emptyKeyAndMessageAreAccepted() {
        // HMAC-SHA256("", "") — a well-known value.
        #expect(
            Hex.encode(HMACSHA256.authenticationCode(key: [], message: []))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }
}
