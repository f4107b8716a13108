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
