import Testing
import CohortCore
import CohortCrypto

/// RFC 5869 appendix A.1–A.3 (HKDF with SHA-256).
struct HKDFTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        var name: String
        var ikm: [UInt8]
        var salt: [UInt8]
        var info: [UInt8]
        var length: Int
        var okm: String
        var testDescription: String { name }
    }

    static let vectors: [Vector] = [
        Vector(
            name: "A.1 basic", ikm: [UInt8](repeating: 0x0b, count: 22), salt: Array(0x00...0x0c), info: Array(0xf0...0xf9),
            length: 42,
            okm: "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"),
        Vector(
            name: "A.2 longer inputs", ikm: Array(0x00...0x4f), salt: Array(0x60...0xaf), info: Array(0xb0...0xff), length: 82,
            okm: """
                b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c\
                59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71\
                cc30c58179ec3e87c14c01d5c1f3434f1d87
                """),
        Vector(
            name: "A.3 empty salt and info", ikm: [UInt8](repeating: 0x0b, count: 22), salt: [], info: [], length: 42,
            okm: "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"),
    ]

    @Test(arguments: vectors)
    func rfc5869(_ vector: Vector) throws {
        let okm = try HKDF.deriveKey(
            inputKeyMaterial: vector.ikm, salt: vector.salt, info: vector.info, outputByteCount: vector.length)
        #expect(Hex.encode(okm) == vector.okm)
    }

    @Test(arguments: [0, -1, 255 * 32 + 1])
    func outputLengthOutOfRangeIsRejected(_ length: Int) {
        let error = #expect(throws: CohortError.self) {
            try HKDF.deriveKey(inputKeyMaterial: [1, 2, 3], salt: [], info: [], outputByteCount: length)
        }
        #expect(error?.code == .invalidInput)
    }
}
