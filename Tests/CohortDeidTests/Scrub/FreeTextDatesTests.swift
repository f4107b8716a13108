import CohortCore
import Testing

@testable import CohortDeid

struct FreeTextDatesTests {
    static let scrubber: Scrubber? = try? Scrubber(roster: [])

    /// (note, shift, expected): every format written back as it came, shifted.
    @Test(arguments: [
        ("on 2026-03-14 it hurt", -10, "on 2026-03-04 it hurt"),
        ("at 2026-03-14T08:30:00Z it hurt", 30, "at 2026-04-13T08:30:00Z it hurt"),
        ("on 3/14 it hurt", -14, "on 2/28 it hurt"),
        ("on 2/29 it hurt", 1, "on 3/1 it hurt"),
        ("since 03/14/2026 worse", 1, "since 03/15/2026 worse"),
        ("since 3/14/26 worse", 20, "since 4/3/26 worse"),
        // German words are in no English dictionary: the allow-list replaces them, the date is shifted.
        ("seit 14.03. schlechter", 20, "[REDACTED] 03.04. [REDACTED]"),
        ("seit 14.03.2026 schlechter", -20, "[REDACTED] 22.02.2026 [REDACTED]"),
        ("since 14 March it hurt", 3, "since 17 March it hurt"),
        ("since the 14th of March 2026", 10, "since the 24th of March 2026"),
        ("on March 14th it hurt", 9, "on March 23rd it hurt"),
        ("on Mar. 14, 2026 it hurt", 1, "on Mar. 15, 2026 it hurt"),
        ("on Saturday, March 14, 2026 it hurt", 2, "on Monday, March 16, 2026 it hurt"),
        ("on Sat 14 March it hurt", 7, "on Sat 21 March it hurt"),
        ("on Sat 14 March it hurt", 2, "on 16 March it hurt"),
        ("on 3/4/2026 it hurt", 5, "on [DATE] it hurt"),
        ("in March 2026 it hurt", 5, "in [DATE] it hurt"),
        ("in 2026 it hurt", 5, "in 2026 it hurt"),
        ("last Tuesday it hurt", 5, "last Tuesday it hurt"),
        ("born 14 March 1961", 5, "born [DATE]"),
        ("pain 7/10 on 3/14", 1, "pain 7/10 on 3/15"),
    ])
    func shiftedInTheirOwnFormat(note: String, shift: Int, expected: String) throws {
        let scrubber = try #require(Self.scrubber)
        var counts = ScrubCounts()
        #expect(scrubber.scrub(note, counts: &counts, shiftDays: shift) == expected)
    }

    /// The byte search of ASCII text answers as `String.contains` does (carriage returns and line
    /// feeds, which `String` reads as one character, included), and non-ASCII text goes to it.
    @Test func birthWordsAreFoundAsStringContainsFindsThem() {
        let pieces = ["born", "bor", "orn", "dob", "do", "birth", "birt", "x", " ", "\r", "\n", "\r\n", "é", "ß", "n\u{301}", "b", "o", "🙂"]
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        for _ in 0..<4_000 {
            var text = ""
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            for k in 0..<Int(state >> 60) {
                text += pieces[Int((state >> UInt64(4 * k % 56)) & 0xFF) % pieces.count]
            }
            let expected = text.contains("born") || text.contains("dob") || text.contains("birth")
            #expect(FreeTextDates.mentionsBirth(text) == expected, "\(Array(text.unicodeScalars))")
        }
        #expect(FreeTextDates.mentionsBirth("date of birth"))
        #expect(!FreeTextDates.mentionsBirth("bor\r\nn"))
        #expect(!FreeTextDates.mentionsBirth("bor" + "n\u{301}"))
    }

    @Test func withoutAnOffsetDatesAreReplaced() throws {
        let scrubber = try #require(Self.scrubber)
        #expect(scrubber.scrub("on 03/14/2026 and 14 March") == "on [DATE] and [DATE]")
    }

    /// The independent route: the shifted date is the calendar's, computed from day numbers.
    @Test(arguments: [-400, -183, -29, -1, 1, 59, 366])
    func shiftAgreesWithTheCalendar(shift: Int) throws {
        let scrubber = try #require(Self.scrubber)
        var counts = ScrubCounts()
        let start = try #require(CivilDate(year: 2025, month: 12, day: 31))
        let moved = CivilDate(daysSinceEpoch: start.daysSinceEpoch + shift)
        #expect(scrubber.scrub("on 2025-12-31", counts: &counts, shiftDays: shift) == "on \(moved.description)")
    }
}
