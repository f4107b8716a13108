import Foundation
import Testing

@testable import CohortCore

struct CivilDateTests {
    static func date(_ text: String) throws -> CivilDate { try #require(CivilDate(iso: text)) }

    @Test func daysSinceEpochRoundTripsEveryDayFrom1900To2100() throws {
        let first = try Self.date("1900-01-01")
        let last = try Self.date("2100-12-31")
        #expect(first.daysSinceEpoch == -25_567)
        #expect(last.daysSinceEpoch == 47_846)
        #expect(first.days(to: last) + 1 == 73_414)  // 201 years, 49 leap days (1900 and 2100 are not leap years)
        var previous = CivilDate(daysSinceEpoch: first.daysSinceEpoch - 1)
        #expect(previous.description == "1899-12-31")
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        var failures = 0
        for n in first.daysSinceEpoch...last.daysSinceEpoch {
            let date = CivilDate(daysSinceEpoch: n)
            var ok = date.daysSinceEpoch == n
            ok = ok && CivilDate(year: date.year, month: date.month, day: date.day) == date
            ok = ok && CivilDate(iso: date.description) == date
            ok = ok && previous < date
            // Consecutive: the next day of the month, or the first of the next month.
            let nextDay = date.year == previous.year && date.month == previous.month && date.day == previous.day + 1
            let nextMonth = date.day == 1 && (date.month == previous.month % 12 + 1) && (date.year == previous.year + (previous.month == 12 ? 1 : 0))
            ok = ok && (nextDay || nextMonth)
            ok = ok && date.isoWeekday == (previous.isoWeekday % 7) + 1
            if n % 97 == 0 {
                let components = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(n) * 86_400))
                ok = ok && components.year == date.year && components.month == date.month && components.day == date.day
            }
            if !ok {
                failures += 1
                Issue.record("day \(n) → \(date)")
                if failures > 5 { return }
            }
            previous = date
        }
    }

    @Test(arguments: [
        ("1970-01-01", 4), ("2000-01-01", 6), ("2025-03-14", 5), ("2024-02-29", 4), ("1900-01-01", 1), ("2100-12-31", 5),
        ("2025-03-16", 7), ("2025-03-17", 1), ("1969-12-31", 3),
    ])
    func isoWeekday(text: String, weekday: Int) throws {
        #expect(try Self.date(text).isoWeekday == weekday)
    }

    @Test(arguments: ["2025-02-29", "1900-02-29", "2100-02-29", "2025-04-31", "2025-13-01", "2025-00-01", "2025-01-00", "0000-01-01",
        "2025-1-01", "2025/01/01", "2025-01-01T00:00", " 2025-01-01", "abcd-ef-gh", ""])
    func rejectsInvalidDates(text: String) {
        #expect(CivilDate(iso: text) == nil)
    }

    @Test func acceptsLeapDays() throws {
        #expect(try Self.date("2000-02-29").day == 29)
        #expect(try Self.date("2024-02-29").month == 2)
        #expect(CivilDate(year: 2023, month: 2, day: 29) == nil)
    }

    @Test func descriptionIsZeroPadded() throws {
        let date = try #require(CivilDate(year: 987, month: 3, day: 4))
        #expect(date.description == "0987-03-04")
        #expect(try JSONEncoder().encode([date]) == Data(#"["0987-03-04"]"#.utf8))
        #expect(try JSONDecoder().decode([CivilDate].self, from: Data(#"["0987-03-04"]"#.utf8)) == [date])
    }

    @Test(arguments: [
        ("2000-06-15", "2025-06-14", 24),  // birthday tomorrow
        ("2000-06-15", "2025-06-15", 25),  // birthday today
        ("2000-06-15", "2025-06-16", 25),
        ("2000-06-15", "2025-01-01", 24),
        ("2000-06-15", "2000-06-15", 0),
        ("2004-02-29", "2025-02-28", 20),  // a leap-day birthday counts from 1 March in other years
        ("2004-02-29", "2025-03-01", 21),
        ("2004-02-29", "2028-02-29", 24),
        ("1935-12-31", "2025-12-30", 89),
        ("1935-12-31", "2025-12-31", 90),
    ])
    func age(birth: String, on day: String, expected: Int) throws {
        #expect(try Self.date(birth).age(on: Self.date(day)) == expected)
    }

    @Test func addingAndCountingDays() throws {
        let date = try Self.date("2024-02-28")
        #expect(date.adding(days: 1).description == "2024-02-29")
        #expect(date.adding(days: 2).description == "2024-03-01")
        #expect(date.adding(days: -59).description == "2023-12-31")
        #expect(date.days(to: try Self.date("2025-02-28")) == 366)
    }
}
