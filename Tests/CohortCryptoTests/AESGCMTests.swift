import Testing
import CohortCore
import CohortCrypto

struct AESGCMTests {
    let key: [UInt8]

    init() throws {
        key = try SecureRandom.bytes(32)
    }

    /// McGrew & Viega GCM specification, test cases 13 and 14 (AES-256, zero key and IV).
    @Test func knownAnswerWithZeroKeyAndNonce() throws {
        let zeroKey = [UInt8](repeating: 0, count: 32)
        let zeroNonce = [UInt8](repeating: 0, count: 12)
        let empty = try AESGCM.seal([], key: zeroKey, nonce: zeroNonce)
        #expect(Hex.encode(Array(empty.suffix(16))) == "530f8afbc74536b9a963b4f1c4cb738b")
        let block = try AESGCM.seal([UInt8](repeating: 0, count: 16), key: zeroKey, nonce: zeroNonce)
        #expect(Hex.encode(Array(block[12..<28])) == "cea7403d4d606b6e074ec5d3baf39d18")
        #expect(Hex.encode(Array(block.suffix(16))) == "d0d1c8a799996bf0265b98b5d48ab919")
    }

    @Test(arguments: [0, 1, 15, 16, 17, 1000, 65_537])
    func roundTrip(_ length: Int) throws {
        let plaintext = try SecureRandom.bytes(length)
        let aad = Array("participants.email".utf8)
        let sealed = try AESGCM.seal(plaintext, key: key, authenticating: aad)
        #expect(sealed.count == 12 + length + 16)
        #expect(try AESGCM.open(sealed, key: key, authenticating: aad) == plaintext)
    }

    @Test func everySealUsesAFreshNonce() throws {
        let plaintext = Array("jane@example.org".utf8)
        let first = try AESGCM.seal(plaintext, key: key)
        let second = try AESGCM.seal(plaintext, key: key)
        #expect(first.prefix(12) != second.prefix(12))
        #expect(first != second)
    }

    @Test func ciphertextDoesNotContainThePlaintext() throws {
        let plaintext = Array("Jane Q. Participant, 1 Main Street".utf8)
        let sealed = try AESGCM.seal(plaintext, key: key)
        #expect(!Hex.encode(sealed).contains(Hex.encode(Array(plaintext.prefix(8)))))
    }

    @Test(arguments: ["nonce", "ciphertext", "tag"])
    func tamperingIsDetected(_ part: String) throws {
        var sealed = try AESGCM.seal(Array("555-0100".utf8), key: key, authenticating: [1])
        let index = switch part {
        case "nonce": 3
        case "ciphertext": 12 + 2
        default: sealed.count - 1
        }
        sealed[index] ^= 0x01
        let error = #expect(throws: CohortError.self) { try AESGCM.open(sealed, key: key, authenticating: [1]) }
        #expect(error?.code == .security)
    }

    @Test func differentAssociatedDataFails() throws {
        let sealed = try AESGCM.seal(Array("1980-02-03".utf8), key: key, authenticating: Array("row-1".utf8))
        let error = #expect(throws: CohortError.self) {
            try AESGCM.open(sealed, key: key, authenticating: Array("row-2".utf8))
        }
        #expect(error?.code == .security)
    }

    @Test func wrongKeyFails() throws {
        let sealed = try AESGCM.seal(Array("MRN 12345".utf8), key: key)
        let otherKey = try SecureRandom.bytes(32)
        let error = #expect(throws: CohortError.self) { try AESGCM.open(sealed, key: otherKey) }
        #expect(error?.code == .security)
    }

    @Test func truncatedInputFails() throws {
        let sealed = try AESGCM.seal(Array("x".utf8), key: key)
        for length in [0, 12, 27] {
            let error = #expect(throws: CohortError.self) { try AESGCM.open(Array(sealed.prefix(length)), key: key) }
            #expect(error?.code == .security)
        }
    }

    @Test func keyMustBe32Bytes() {
        let error = #expect(throws: CohortError.self) { try AESGCM.seal([1], key: [UInt8](repeating: 0, count: 16)) }
        #expect(error?.code == .invalidInput)
    }

    /// One opener, many values: each opens with its own nonce and associated data, as the
    /// one-shot `open` opens it (the key is set up once, the nonce per value).
    @Test func openerOpensManyValuesUnderItsKey() throws {
        let opener = try AESGCM.Opener(key: key)
        for (index, length) in [0, 1, 16, 17, 300, 0, 5].enumerated() {
            let plaintext = try SecureRandom.bytes(length)
            let aad = Array("note-\(index)".utf8)
            let sealed = try AESGCM.seal(plaintext, key: key, authenticating: aad)
            #expect(try opener.open(sealed, authenticating: aad) == plaintext)
            #expect(try AESGCM.open(sealed, key: key, authenticating: aad) == plaintext)
        }
    }

    /// A value that fails (altered, other associated data, truncated) throws as `open` does,
    /// and the opener still opens the next good value.
    @Test func openerRecoversAfterAFailedValue() throws {
        let opener = try AESGCM.Opener(key: key)
        let good = try AESGCM.seal(Array("first".utf8), key: key, authenticating: [1])
        var altered = try AESGCM.seal(Array("second".utf8), key: key, authenticating: [1])
        altered[12] ^= 0x01
        let next = try AESGCM.seal(Array("third".utf8), key: key, authenticating: [2])
        #expect(try opener.open(good, authenticating: [1]) == Array("first".utf8))
        for bad in [(altered, [UInt8]([1])), (good, [2]), (Array(good.prefix(20)), [1])] {
            let error = #expect(throws: CohortError.self) { try opener.open(bad.0, authenticating: bad.1) }
            #expect(error?.code == .security)
            #expect(try opener.open(next, authenticating: [2]) == Array("third".utf8))
        }
    }

    @Test func openerChecksItsKey() throws {
        let sealed = try AESGCM.seal(Array("MRN 12345".utf8), key: key)
        let other = try AESGCM.Opener(key: try SecureRandom.bytes(32))
        #expect((#expect(throws: CohortError.self) { try other.open(sealed) })?.code == .security)
        #expect((#expect(throws: CohortError.self) { try AESGCM.Opener(key: [UInt8](repeating: 0, count: 16)) })?.code == .invalidInput)
    }
}
