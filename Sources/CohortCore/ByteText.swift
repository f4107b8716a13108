/// Text the writers append straight to a byte buffer, so a row or resource is built without an
/// intermediate `String` per value. Each function writes exactly the bytes of its `String`
/// counterpart (`String(Int)`, `CivilDate.description`, the ISO 8601 text composed from
/// Strings); tests pin that. `Timestamp.iso8601` is built here too.
package enum ByteText {
    /// Calls `body` with `text`'s UTF-8: the string's own storage when it is contiguous (a native
    /// string always is), else a copy made contiguous. Calling `withUTF8` on a copy of the string
    /// costs a retain and a release each time, per value on the writers' path (issue 28).
    @inline(__always)
    package static func withUTF8<Result>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        if let result = try text.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = text
        return try copy.withUTF8(body)
    }

    /// Appends the decimal digits of `value` (with `-` when negative), as `String(value)` does.
    @inline(__always)
    package static func appendInt(_ value: Int, to bytes: inout [UInt8]) {
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
            // The magnitude of Int.min does not fit an Int; its digits come from the UInt.
            appendDigits(value.magnitude, to: &bytes)
        } else {
            appendDigits(UInt(value), to: &bytes)
        }
    }

    private static func appendDigits(_ value: UInt, to bytes: inout [UInt8]) {
        if value < 10 {
            bytes.append(UInt8(truncatingIfNeeded: value) &+ 0x30)
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes hold the 20 digits of UInt64.max
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { raw in
            while rest > 0 {
                count += 1
                raw[24 - count] = UInt8(truncatingIfNeeded: rest % 10) &+ 0x30
                rest /= 10
            }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[(24 - count)...]))
        }
    }

    /// Appends `value` with at least `width` digits, zero-padded on the left (`CivilDate.pad`).
    @inline(__always)
    package static func appendPadded(_ value: Int, width: Int, to bytes: inout [UInt8]) {
        if value >= 0 {
            var length = 1
            var rest = value / 10
            while rest > 0 {
                length += 1
                rest /= 10
            }
            if length < width { bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: width - length)) }
            appendDigits(UInt(value), to: &bytes)
        } else {
            // Negative values are padded as their text is: `String(repeating: "0") + "-5"`.
            let length = String(value).utf8.count
            if length < width { bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: width - length)) }
            appendInt(value, to: &bytes)
        }
    }

    /// Appends `date` as `YYYY-MM-DD` (`CivilDate.description`).
    package static func appendDate(_ date: CivilDate, to bytes: inout [UInt8]) {
        appendPadded(date.year, width: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendPadded(date.month, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendPadded(date.day, width: 2, to: &bytes)
    }

    /// Appends `instant` as ISO 8601 with its offset (`Timestamp.iso8601`).
    package static func appendTimestamp(_ instant: Timestamp, to bytes: inout [UInt8]) {
        let localMs = instant.epochMilliseconds + Int64(instant.utcOffsetSeconds) * 1000
        let days = Timestamp.floorDiv(localMs, 86_400_000)
        let msOfDay = Int(localMs - days * 86_400_000)
        let date = CivilDate(daysSinceEpoch: Int(days))
        if (1000...9999).contains(date.year), abs(Int(instant.utcOffsetSeconds)) < 100 * 3600 {
            appendFourDigitYearTimestamp(date, msOfDay: msOfDay, offset: Int(instant.utcOffsetSeconds), to: &bytes)
            return
        }
        appendDate(date, to: &bytes)
        let seconds = msOfDay / 1000
        let millis = msOfDay % 1000
        bytes.append(UInt8(ascii: "T"))
        appendTwoDigits(seconds / 3600, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendTwoDigits(seconds / 60 % 60, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendTwoDigits(seconds % 60, to: &bytes)
        if millis != 0 {
            bytes.append(UInt8(ascii: "."))
            bytes.append(UInt8(truncatingIfNeeded: millis / 100) &+ 0x30)
            appendTwoDigits(millis % 100, to: &bytes)
        }
        let offset = Int(instant.utcOffsetSeconds)
        if offset == 0 {
            bytes.append(UInt8(ascii: "Z"))
        } else {
            bytes.append(offset < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
            let minutes = abs(offset) / 60
            appendPadded(minutes / 60, width: 2, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            appendTwoDigits(minutes % 60, to: &bytes)
        }
    }

    /// ``appendTimestamp(_:to:)`` for a date with a four-digit year and an offset under 100 hours
    /// (every instant a study holds):
    /// the same bytes, composed in a buffer on the stack and appended once, instead of a dozen
    /// appends that each check the array's capacity and uniqueness (two timestamps per exported
    /// row; issue 28, ninth round). `ByteTextTests` compare it with the general path.
    private static func appendFourDigitYearTimestamp(_ date: CivilDate, msOfDay: Int, offset: Int, to bytes: inout [UInt8]) {
        var text: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)  // 29 bytes at most: 2024-03-10T08:05:09.123-05:00
        let count = withUnsafeMutableBytes(of: &text) { raw -> Int in
            var at = 0
            func put(_ byte: UInt8) {
                raw[at] = byte
                at += 1
            }
            func two(_ value: Int) {
                put(UInt8(truncatingIfNeeded: value / 10) &+ 0x30)
                put(UInt8(truncatingIfNeeded: value % 10) &+ 0x30)
            }
            two(date.year / 100)
            two(date.year % 100)
            put(UInt8(ascii: "-"))
            two(date.month)
            put(UInt8(ascii: "-"))
            two(date.day)
            put(UInt8(ascii: "T"))
            let seconds = msOfDay / 1000
            let millis = msOfDay % 1000
            two(seconds / 3600)
            put(UInt8(ascii: ":"))
            two(seconds / 60 % 60)
            put(UInt8(ascii: ":"))
            two(seconds % 60)
            if millis != 0 {
                put(UInt8(ascii: "."))
                put(UInt8(truncatingIfNeeded: millis / 100) &+ 0x30)
                two(millis % 100)
            }
            if offset == 0 {
                put(UInt8(ascii: "Z"))
            } else {
                put(offset < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
                let minutes = abs(offset) / 60
                two(minutes / 60)
                put(UInt8(ascii: ":"))
                two(minutes % 60)
            }
            return at
        }
        withUnsafeBytes(of: &text) { bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }

    /// `instant` as ISO 8601 with its offset, built through bytes.
    public static func timestamp(_ instant: Timestamp) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        appendTimestamp(instant, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Two digits of a value in 0...99.
    @inline(__always)
    private static func appendTwoDigits(_ value: Int, to bytes: inout [UInt8]) {
        bytes.append(UInt8(truncatingIfNeeded: value / 10) &+ 0x30)
        bytes.append(UInt8(truncatingIfNeeded: value % 10) &+ 0x30)
    }
}
