import Testing

@testable import CohortCore

struct ByteTextTests {
    static let integers = [0, 1, 9, 10, 42, 99, 100, 12_345, -1, -10, -987, Int.max, Int.min, 1_000_000_007]

    @Test(arguments: integers)
    func integersMatchStringInit(value: Int) {
        var bytes: [UInt8] = []
        ByteText.appendInt(value, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == String(value))
    }

    @Test(arguments: [(5, 2, "05"), (0, 4, "0000"), (12, 2, "12"), (123, 2, "123"), (7, 3, "007"), (12_345, 4, "12345"), (-5, 3, "0-5")])
    func paddedNumbersMatchCivilDatePadding(value: Int, width: Int, expected: String) {
        var bytes: [UInt8] = []
        ByteText.appendPadded(value, width: width, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == expected)
    }

    /// Offsets of every sign and shape, and around 100 hours, where the four-digit-year path
    /// (``ByteText/appendTimestamp(_:to:)``) hands over to the general one.
    static let offsets: [Int32] = [0, 3600, -3600, 19_800, -12_600, 50_400, -43_200, 20_700, -60, 359_940, -359_940, 360_000, -363_600]

    /// Every instant in a spread of dates (before and after 1970), times (with and without
    /// milliseconds) and offsets prints exactly as the composed `Timestamp` text.
    @Test(arguments: offsets)
    func timestampsMatchISO8601(offset: Int32) {
        var generator = SeededRandom(seed: UInt64(bitPattern: Int64(offset)) &+ 7)
        var milliseconds: [Int64] = [0, 1, -1, 999, -999, 1000, 86_399_999, -86_400_000, 951_782_400_000, -62_135_596_800_000, 253_402_300_799_999]
        for _ in 0..<2000 { milliseconds.append(Int64.random(in: -70_000_000_000_000...70_000_000_000_000, using: &generator)) }
        for _ in 0..<500 { milliseconds.append(Int64.random(in: 0...2_000_000_000, using: &generator) * 1000) }
        for ms in milliseconds {
            let instant = Timestamp(epochMilliseconds: ms, utcOffsetSeconds: offset)
            #expect(ByteText.timestamp(instant) == instant.composedISO8601)
            var bytes: [UInt8] = []
            ByteText.appendDate(instant.localDate, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == instant.localDate.description)
        }
    }
}
