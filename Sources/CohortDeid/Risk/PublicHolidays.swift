package import CohortCore

/// Public holidays of the regions `cohort deid risk` aligns daily series with: the United States
/// (federal), Germany (nationwide) and Australia (New South Wales), computed by their rules for
/// any year (Easter by the Gregorian computus). What an attacker looks up in a public calendar.
package enum PublicHolidays {
    /// A region whose public calendar is known.
    package enum Region: String, Sendable, CaseIterable {
        case us = "US", de = "DE", au = "AU"
    }

    /// The regions a published UTC offset points at: US offsets (-04:00 to -10:00), Central
    /// European (+01:00, +02:00), Australian east and centre (+09:30 to +11:00); every region when
    /// the offset says nothing (`+00:00`, the generalized one, or none).
    package static func regions(forOffsetSeconds offset: Int32?) -> [Region] {
        guard let offset, offset != 0 else { return Region.allCases }
        switch offset {
        case -36_000 ... -14_400: return [.us]
        case 3_600, 7_200: return [.de]
        case 34_200 ... 39_600: return [.au]
        default: return []
        }
    }

    /// The region of an IANA zone whose calendar is known (US zones, Germany, Australia), or nil.
    package static func region(forZone identifier: String) -> Region? {
        let us: Set<String> = [
            "America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles", "America/Phoenix", "America/Anchorage",
            "America/Detroit", "America/Boise", "America/Indiana/Indianapolis", "Pacific/Honolulu",
        ]
        if us.contains(identifier) || identifier.hasPrefix("US/") { return .us }
        if identifier == "Europe/Berlin" || identifier == "Europe/Busingen" { return .de }
        if identifier.hasPrefix("Australia/") { return .au }
        return nil
    }

    /// Whether `day` (days since 1970) is a holiday of `region`.
    package static func isHoliday(_ day: Int, in region: Region) -> Bool {
        let date = CivilDate(daysSinceEpoch: day)
        return dates(region, year: date.year).contains(date)
    }

    /// The holidays of `region` in `year`.
    public static func dates(_ region: Region, year: Int) -> [CivilDate] {
        func day(_ month: Int, _ day: Int) -> CivilDate? { CivilDate(year: year, month: month, day: day) }
        /// The `n`th `weekday` (ISO, Monday = 1) of `month`; n = -1: the last.
        func nth(_ n: Int, _ weekday: Int, of month: Int) -> CivilDate? {
            guard let first = day(month, 1) else { return nil }
            let offset = (weekday - first.isoWeekday + 7) % 7
            if n > 0 { return first.adding(days: offset + 7 * (n - 1)) }
            guard let next = (month == 12 ? CivilDate(year: year + 1, month: 1, day: 1) : day(month + 1, 1)) else { return nil }
            let last = next.adding(days: -1)
            return last.adding(days: -((last.isoWeekday - weekday + 7) % 7))
        }
        let easter = Self.easter(year)
        let list: [CivilDate?]
        switch region {
        case .us:
            list = [
                day(1, 1), nth(3, 1, of: 1), nth(3, 1, of: 2), nth(-1, 1, of: 5), day(6, 19), day(7, 4), nth(1, 1, of: 9),
                nth(2, 1, of: 10), day(11, 11), nth(4, 4, of: 11), day(12, 25),
            ]
        case .de:
            list = [
                day(1, 1), easter?.adding(days: -2), easter?.adding(days: 1), day(5, 1), easter?.adding(days: 39),
                easter?.adding(days: 50), day(10, 3), day(12, 25), day(12, 26),
            ]
        case .au:
            list = [
                day(1, 1), day(1, 26), easter?.adding(days: -2), easter?.adding(days: -1), easter?.adding(days: 1), day(4, 25),
                nth(2, 1, of: 6), nth(1, 1, of: 10), day(12, 25), day(12, 26),
            ]
        }
        return list.compactMap { $0 }
    }

    /// Easter Sunday of `year` (Gregorian; the anonymous computus).
    static func easter(_ year: Int) -> CivilDate? {
        let a = year % 19, b = year / 100, c = year % 100, d = b / 4, e = b % 4
        let f = (b + 8) / 25, g = (b - f + 1) / 3, h = (19 * a + b - d - g + 15) % 30
        let i = c / 4, k = c % 4, l = (32 + 2 * e + 2 * i - h - k) % 7, m = (a + 11 * h + 22 * l) / 451
        let month = (h + l - 7 * m + 114) / 31, day = (h + l - 7 * m + 114) % 31 + 1
        return CivilDate(year: year, month: month, day: day)
    }
}
