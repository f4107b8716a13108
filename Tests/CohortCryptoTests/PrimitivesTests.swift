import Testing
import CohortCrypto

struct ConstantTimeEqualsTests {
    @Test func comparesContentAndLength() {
        #expect(constantTimeEquals([], []))
        #expect(constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2]))
        #expect(!constantTimeEquals([], [0]))
    }
}

struct SecureRandomTests {
    @Test func returnsRequestedCountAndDiffers() throws {
        #expect(try SecureRandom.bytes(0).isEmpty)
        let first = try SecureRandom.bytes(32)
        let second = try SecureRandom.bytes(32)
        #expect(first.count == 32)
        #expect(first != second)
    }
}

struct CRC32Tests {
    @Test func checkValue() {
        // The standard CRC-32 check value for "123456789".
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([]) == 0)
    }

    @Test func continuesFromAnInitialValue() {
        let whole = CRC32.checksum(Array("123456789".utf8))
        let part = CRC32.checksum(Array("1234".utf8))
        #expect(CRC32.checksum(Array("56789".utf8), initial: part) == whole)
    }
}
