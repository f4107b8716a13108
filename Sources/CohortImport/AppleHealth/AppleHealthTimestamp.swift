package import CohortCore

/// Apple Health's instants: `YYYY-MM-DD HH:MM:SS ±hhmm` (local wall-clock time and its offset).
package enum AppleHealthTimestamp {
    /// Parses `bytes`, keeping the written offset; nil when they are not in Apple's form.
    package static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        guard bytes.count == 25, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x20, bytes[13] == 0x3A, bytes[16] == 0x3A, bytes[19] == 0x20
        else { return nil }
        func digits(_ at: Int, _ count: Int) -> Int? {
            var n = 0
            for i in at..<(at + count) {
                let c = bytes[i]
                guard c >= 0x30, c <= 0x39 else { return nil }
                n = n * 10 + Int(c - 0x30)
            }
            return n
        }
        guard let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2), let hour = digits(11, 2), let minute = digits(14, 2),
            let second = digits(17, 2), let offsetHours = digits(21, 2), let offsetMinutes = digits(23, 2),
            bytes[20] == 0x2B || bytes[20] == 0x2D, hour < 24, minute < 60, second < 61, offsetHours < 24, offsetMinutes < 60,
            let date = CivilDate(year: year, month: month, day: day)
        else { return nil }
        let offset = (bytes[20] == 0x2D ? -1 : 1) * (offsetHours * 3600 + offsetMinutes * 60)
        let local = Int64(date.daysSinceEpoch) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
        return Timestamp(epochMilliseconds: (local - Int64(offset)) * 1000, utcOffsetSeconds: Int32(offset))
    }
}
