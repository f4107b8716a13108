/// Text the writers append straight to a byte buffer, so a row or resource is built without an
/// intermediate `String` per value. Each function writes exactly the bytes of its `String`
/// counterpart (`String(Int)`, `CivilDate.description`, the ISO 8601 text composed from
/// Strings); tests pin that. `Timestamp.iso8601` is built here too.
package enum ByteText {
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
        appendDate(CivilDate(daysSinceEpoch: Int(days)), to: &bytes)
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
