import Testing
import CohortCompression

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
