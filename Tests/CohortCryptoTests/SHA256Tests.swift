import Foundation
import Testing
import CohortCrypto

struct SHA256Tests {
    @Test func hashOfABCMatchesFIPS180Vector() {
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func hashOfEmptyInput() {
        #expect(SHA256.hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hash(Data()) == SHA256.hash([]))
    }

    @Test func twoBlockVector() {
        let message = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(SHA256.hex(message) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func streamingInPiecesEqualsOneShot() throws {
        let data = try SecureRandom.bytes(100_003)
        let hasher = SHA256Hasher()
        var offset = 0
        for size in [1, 63, 64, 65, 4096, 7] {
            hasher.update(Array(data[offset..<(offset + size)]))
            offset += size
        }
        hasher.update(Data(data[offset...]))
        #expect(hasher.finalize() == SHA256.hash(data))
    }

    @Test func finalizeResetsTheHasher() {
        let hasher = SHA256Hasher()
        hasher.update(Array("first".utf8))
        _ = hasher.finalize()
        hasher.update(Array("abc".utf8))
        #expect(Hex.encode(hasher.finalize()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}

extension SHA256Tests {
    @Test func anyByteSequenceHashesLikeItsArray() {
        let text = "protocol: cohort/protocol@1\n"
        #expect(SHA256.hash(text.utf8) == SHA256.hash(Array(text.utf8)))
        #expect(SHA256.hex(text.utf8.lazy.filter { $0 != 0x0a }) == SHA256.hex(Array(text.utf8.dropLast())))
    }
}
