public import Foundation

/// An instant with the UTC offset it was observed at, so exports can write the participant's
/// local time (`2025-03-14T08:30:00+01:00`) and intervals stay exact.
public struct Timestamp: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var epochMilliseconds: Int64
    /// The UTC offset, in seconds, that local times are written with.
    public var utcOffsetSeconds: Int32

    public init(epochMilliseconds: Int64, utcOffsetSeconds: Int32 = 0) {
        self.epochMilliseconds = epochMilliseconds
        self.utcOffsetSeconds = utcOffsetSeconds
    }

    /// The instant `date` written at the offset `timeZone` has at that instant.
    public init(_ date: Date, in timeZone: TimeZone) {
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded(.towardZero))
        self.init(epochMilliseconds: ms, utcOffsetSeconds: Int32(timeZone.secondsFromGMT(for: date)))
    }

    public var date: Date { Date(timeIntervalSince1970: Double(epochMilliseconds) / 1000) }

    /// The calendar day of this instant at its own offset.
    public var localDate: CivilDate {
        let localMs = epochMilliseconds + Int64(utcOffsetSeconds) * 1000
        return CivilDate(daysSinceEpoch: Int(Self.floorDiv(localMs, 86_400_000)))
    }

    /// The calendar day of this instant in `timeZone` (DST-correct).
    package func localDate(in timeZone: TimeZone) -> CivilDate {
        let offset = Int64(timeZone.secondsFromGMT(for: date))
        return CivilDate(daysSinceEpoch: Int(Self.floorDiv(epochMilliseconds + offset * 1000, 86_400_000)))
    }

    /// The same local wall-clock time and offset, moved by whole days (date shifting).
    package func adding(days: Int) -> Timestamp {
        Timestamp(epochMilliseconds: epochMilliseconds + Int64(days) * 86_400_000, utcOffsetSeconds: utcOffsetSeconds)
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.epochMilliseconds < rhs.epochMilliseconds }

    public static func == (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.epochMilliseconds == rhs.epochMilliseconds && lhs.utcOffsetSeconds == rhs.utcOffsetSeconds
    }

    /// ISO 8601 with offset: `2025-03-14T08:30:00+01:00`, milliseconds only when non-zero, `Z` for UTC.
    public var description: String { iso8601 }

    public var iso8601: String { ByteText.timestamp(self) }

    /// `a / b` rounded towards negative infinity (days before 1970 stay on their day).
    package static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    /// Parses an ISO 8601 date-time: `YYYY-MM-DD[T| ]HH:MM[:SS[.fff]][Z|±HH:MM|±HHMM]`, or a bare
    /// `YYYY-MM-DD` (midnight). Without an offset the wall-clock time is read in `timeZone`;
    /// without either, nil is returned so the caller can say the offset is missing.
    public static func parse(_ text: some StringProtocol, defaultTimeZone timeZone: TimeZone?) -> Timestamp? {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBufferPointer { parse(UnsafeBufferPointer($0), defaultTimeZone: timeZone) }
    }

    /// Byte-level variant of `parse(_:defaultTimeZone:)` for importers.
    package static func parse(_ b: UnsafeBufferPointer<UInt8>, defaultTimeZone timeZone: TimeZone?) -> Timestamp? {
        let n = b.count
        guard n >= 10, b[4] == 0x2D, b[7] == 0x2D,
            let y = num(b, 0, 4), let mo = num(b, 5, 2), let d = num(b, 8, 2),
            let date = CivilDate(year: y, month: mo, day: d)
        else { return nil }
        var hour = 0, minute = 0, second = 0, millis = 0
        var i = 10
        if i < n, b[i] == 0x54 || b[i] == 0x20 || b[i] == 0x74 {
            i += 1
            guard let h = num(b, i, 2), i + 5 <= n, b[i + 2] == 0x3A, let m = num(b, i + 3, 2) else { return nil }
            hour = h
            minute = m
            i += 5
            if i < n, b[i] == 0x3A {
                guard let s = num(b, i + 1, 2) else { return nil }
                second = s
                i += 3
                if i < n, b[i] == 0x2E || b[i] == 0x2C {
                    i += 1
                    var digits = 0
                    var frac = 0
                    while i < n, b[i] >= 48, b[i] <= 57 {
                        if digits < 3 { frac = frac * 10 + Int(b[i] - 48) }
                        digits += 1
                        i += 1
                    }
                    guard digits > 0 else { return nil }
                    // More than three digits are truncated to milliseconds; fewer are scaled up.
                    if digits < 3 { for _ in digits..<3 { frac *= 10 } }
                    millis = frac
                }
            }
            guard hour < 24, minute < 60, second < 61 else { return nil }
        }
        let localMs =
            Int64(date.daysSinceEpoch) * 86_400_000 + Int64(hour * 3600 + minute * 60 + min(second, 59)) * 1000
            + Int64(millis)
        var offset: Int
        if i == n {
            guard let timeZone else { return nil }
            offset = resolveOffset(localMs: localMs, in: timeZone)
        } else if b[i] == 0x5A || b[i] == 0x7A {
            guard i + 1 == n else { return nil }
            offset = 0
        } else if b[i] == 0x2B || b[i] == 0x2D {
            let sign = b[i] == 0x2D ? -1 : 1
            guard let oh = num(b, i + 1, 2) else { return nil }
            var om = 0
            if i + 3 == n {
                om = 0
            } else if i + 6 == n, b[i + 3] == 0x3A, let m = num(b, i + 4, 2) {
                om = m
            } else if i + 5 == n, let m = num(b, i + 3, 2) {
                om = m
            } else {
                return nil
            }
            guard oh <= 14, om < 60 else { return nil }
            offset = sign * (oh * 3600 + om * 60)
        } else {
            return nil
        }
        return Timestamp(epochMilliseconds: localMs - Int64(offset) * 1000, utcOffsetSeconds: Int32(offset))
    }

    /// The UTC offset a wall-clock time has in `timeZone`. In a spring-forward gap the time is
    /// read with the offset before the change (it moves forward by the gap, as java.time does);
    /// in a fall-back overlap the earlier (daylight) instant is chosen.
    package static func resolveOffset(localMs: Int64, in timeZone: TimeZone) -> Int {
        resolveOffset(localMs: localMs) { ms in timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(ms) / 1000)) }
    }

    /// ``resolveOffset(localMs:in:)`` with the zone given as its UTC offset (seconds) at a UTC
    /// instant (milliseconds), so callers can answer from a cache of the zone's transitions.
    package static func resolveOffset(localMs: Int64, offset: (_ atUTCMilliseconds: Int64) -> Int) -> Int {
        // A day either side: UTC offsets reach ±14 h, so probing half a day away would land
        // after a transition for zones at +12 h or more (Auckland's gap read an hour early).
        let before = offset(localMs - 86_400_000)
        let after = offset(localMs + 86_400_000)
        if before == after { return before }
        // Both candidate offsets around a transition: keep those that map back to this wall time.
        let candidates = [max(before, after), min(before, after)].filter { offset(localMs - Int64($0) * 1000) == $0 }
        return candidates.first ?? before
    }

    @inline(__always)
    static func num(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ count: Int) -> Int? {
        guard start + count <= b.count else { return nil }
        var value = 0
        for i in start..<(start + count) {
            let c = b[i]
            guard c >= 48, c <= 57 else { return nil }
            value = value * 10 + Int(c - 48)
        }
        return value
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = Timestamp.parse(text, defaultTimeZone: nil) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected an ISO 8601 date-time with offset")
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(iso8601)
    }
}
