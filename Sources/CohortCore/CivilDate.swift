public import Foundation

/// A calendar day without a time zone (proleptic Gregorian), such as an enrollment date or a
/// date of birth.
public struct CivilDate: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int

    /// Creates a date, or returns nil when the day does not exist (e.g. 2025-02-30).
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month), day >= 1,
            day <= CivilDate.daysIn(month: month, year: year)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// The day `daysSinceEpoch` days after 1970-01-01.
    public init(daysSinceEpoch: Int) {
        // Howard Hinnant's civil_from_days.
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        self.year = yoe + era * 400 + (m <= 2 ? 1 : 0)
        self.month = m
        self.day = d
    }

    /// Days since 1970-01-01 (negative before).
    public var daysSinceEpoch: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// Parses `YYYY-MM-DD`.
    public init?(iso text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            let y = Self.digits(bytes, 0, 4), let m = Self.digits(bytes, 5, 2), let d = Self.digits(bytes, 8, 2)
        else { return nil }
        self.init(year: y, month: m, day: d)
    }

    /// `YYYY-MM-DD`.
    public var description: String {
        Self.pad(year, 4) + "-" + Self.pad(month, 2) + "-" + Self.pad(day, 2)
    }

    /// The date `days` days later (earlier when negative).
    package func adding(days: Int) -> CivilDate { CivilDate(daysSinceEpoch: daysSinceEpoch + days) }

    /// Whole days from `self` to `other`.
    public func days(to other: CivilDate) -> Int { other.daysSinceEpoch - daysSinceEpoch }

    /// ISO weekday, Monday = 1 … Sunday = 7.
    public var isoWeekday: Int {
        let d = (daysSinceEpoch % 7 + 7) % 7  // 1970-01-01 was a Thursday (4)
        return (d + 3) % 7 + 1
    }

    /// Full years from `self` (a birth date) to `date`.
    package func age(on date: CivilDate) -> Int {
        var years = date.year - year
        if date.month < month || (date.month == month && date.day < day) { years -= 1 }
        return years
    }

    public static func < (lhs: CivilDate, rhs: CivilDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let date = CivilDate(iso: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected a date YYYY-MM-DD")
        }
        self = date
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    static func digits(_ bytes: [UInt8], _ start: Int, _ count: Int) -> Int? {
        guard start + count <= bytes.count else { return nil }
        var value = 0
        for i in start..<(start + count) {
            let b = bytes[i]
            guard b >= 48, b <= 57 else { return nil }
            value = value * 10 + Int(b - 48)
        }
        return value
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}

extension CivilDate {
    /// The local calendar day of `instant` in `timeZone`.
    public init(_ instant: Date, in timeZone: TimeZone) {
        let seconds = Int((instant.timeIntervalSince1970).rounded(.down)) + timeZone.secondsFromGMT(for: instant)
        self.init(daysSinceEpoch: Int((Double(seconds) / 86_400).rounded(.down)))
    }
}
