import CohortCore

/// Dates written inside free text, shifted by the participant's offset and written back in the
/// format they came in: ISO `2026-03-14` (time of day kept), US `3/14` and `03/14/2026`,
/// European `14.03.` and `14.03.2026`, `14 March`, `14th of March 2026`, `March 14th`, each with
/// an optional weekday (`Tuesday, March 14`), which is recomputed when the year is known, kept
/// when the shift is whole weeks, and dropped otherwise.
///
/// Not shifted but replaced by `[DATE]`: dates whose order is ambiguous (`3/4/2026`: both parts
/// ≤ 12), a month with a year and no day (`March 2026`: no day to shift), birth dates (a roster
/// birth date, or a date after "born", "DOB", "birth"), and every date when no offset is known.
/// Years alone and relative dates ("last Tuesday") are not matched at all. A day and month without
/// a year (`3/14`, `14 March`) are shifted as if in a common year (29 February in a leap
/// year); they carry no year after shifting either.
enum FreeTextDates {
    /// The year a date without one is computed in: a common year (three years in four are),
    /// or a leap year for 29 February.
    static let referenceYear = 2025
    static let leapReferenceYear = 2024

    static let monthNames = [
        "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
    ]
    static let weekdayNames = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    /// Words before `3/14` that make it a date rather than a score or a fraction.
    static let contextWords: Set<String> = [
        "on", "since", "from", "until", "till", "til", "by", "before", "after", "of", "dated", "started", "starting", "began",
        "ended", "through", "thru", "to", "and", "visit", "appointment", "appt", "date", "due", "seen", "week",
    ]

    /// Whether lowercased `text` holds "born", "dob" or "birth": bytes compared when it is ASCII
    /// (the same answer; `String.contains` was a tenth of the scrubber's time, issue 28), else
    /// `String.contains`.
    static func mentionsBirth(_ text: String) -> Bool {
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else { return text.contains("born") || text.contains("dob") || text.contains("birth") }
        var text = text
        return text.withUTF8 { containsASCII($0, "born") || containsASCII($0, "dob") || containsASCII($0, "birth") }
    }

    private static func containsASCII(_ bytes: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        let needle = word.utf8Start
        for i in 0...(bytes.count - count) where bytes[i] == needle[0] {
            var j = 1
            while j < count, bytes[i + j] == needle[j] { j += 1 }
            if j == count { return true }
        }
        return false
    }

    /// What replaces `match` (found by the date detector) in text whose preceding part is
    /// `before`: the shifted date, `[DATE]`, or nil when the match is not a date after all
    /// (`7/10` as a score, `13/45`). `isBirthDate(year, month, day)` says whether a full date is
    /// a roster birth date.
    static func replacement(
        for match: Substring, before: Substring, shiftDays: Int?, isBirthDate: (Int, Int, Int) -> Bool
    ) -> String? {
        var text = match
        // An optional weekday first.
        var weekday: (word: Substring, tail: Substring)?
        if let space = text.firstIndex(where: { $0 == " " || $0 == "," || $0 == "." }) {
            let word = text[..<space]
            if weekdayIndex(word) != nil {
                var rest = text[space...]
                let tailEnd = rest.firstIndex(where: { !($0 == " " || $0 == "," || $0 == ".") }) ?? rest.endIndex
                let tail = rest[..<tailEnd]
                rest = rest[tailEnd...]
                weekday = (word, tail)
                text = rest
            }
        }
        guard var parsed = parse(text) else { return nil }
        if parsed.needsContext, weekday == nil, !hasDateContext(before) { return nil }
        guard let month = parsed.month, let day = parsed.day else { return "[DATE]" }  // month + year, or ambiguous
        let year = parsed.year ?? (month == 2 && day == 29 ? leapReferenceYear : referenceYear)
        guard let date = CivilDate(year: year, month: month, day: day) else { return nil }
        let lowered = before.suffix(24).lowercased()
        if mentionsBirth(lowered) { return "[DATE]" }
        if parsed.year != nil, isBirthDate(year, month, day) { return "[DATE]" }
        guard let shiftDays else { return "[DATE]" }
        let shifted = date.adding(days: shiftDays)
        parsed.set(shifted, keepYear: parsed.year != nil)
        var output = parsed.render()
        if let weekday {
            if parsed.year != nil {
                output = styled(weekdayNames[shifted.isoWeekday - 1], like: weekday.word) + weekday.tail + output
            } else if shiftDays % 7 == 0 {
                output = String(weekday.word) + weekday.tail + output
            }
        }
        return output
    }

    static func weekdayIndex(_ word: Substring) -> Int? {
        let w = word.lowercased()
        guard w.count >= 3 else { return nil }
        return weekdayNames.firstIndex { $0.hasPrefix(w) && (w.count == 3 || w.count >= 4) }
    }

    static func hasDateContext(_ before: Substring) -> Bool {
        let words = before.lowercased().split(whereSeparator: { !$0.isLetter })
        guard let last = words.last else { return false }
        if contextWords.contains(String(last)) { return true }
        return weekdayIndex(Substring(last)) != nil
    }

    /// The word `name` written like `model`: all capitals, capitalized or lower case, and as
    /// long (three letters, or whole).
    static func styled(_ name: String, like model: Substring) -> String {
        let written = model.lowercased()
        var word = name
        if !monthNames.contains(written), !weekdayNames.contains(written) {
            // An abbreviation: Mar, Sept, Tue, Thurs.
            word = written == "sept" && name == "september" ? "sept" : String(name.prefix(min(max(model.count, 3), name.count)))
        }
        if model.allSatisfy({ $0.isUppercase || !$0.isLetter }), model.count > 1 { return word.uppercased() }
        if model.first?.isUppercase == true { return word.prefix(1).uppercased() + word.dropFirst() }
        return word
    }

    static func ordinal(_ day: Int) -> String { IdentifierIndex.ordinalSuffix(day) }

    /// A date as written: its parts and how to write them again.
    struct Parsed {
        enum Layout {
            /// `2026-03-14…`: year, month, day, then `rest` (a time).
            case yearFirst
            /// Numbers with `separator`: month first (US) or day first.
            case numeric(monthFirst: Bool)
            /// `14th of March 2026`.
            case dayMonth
            /// `March 14th, 2026`.
            case monthDay
        }

        var layout: Layout
        var year: Int?
        var month: Int?
        var day: Int?
        var separator: Character = "/"
        var firstWidth = 1
        var secondWidth = 1
        var yearWidth = 4
        var trailingDot = false
        var rest: Substring = ""
        var monthWord: Substring = ""
        var monthDot = false
        var ordinalWord: Substring = ""
        var middle: Substring = " "  // between day and month, or month and day
        var yearGap: Substring = " "
        /// A bare `3/14`: a date only after a date word (or a weekday).
        var needsContext = false

        mutating func set(_ date: CivilDate, keepYear: Bool) {
            month = date.month
            day = date.day
            if keepYear { year = date.year }
        }

        func pad(_ value: Int, _ width: Int) -> String {
            let s = String(value)
            return s.count < width ? String(repeating: "0", count: width - s.count) + s : s
        }

        func render() -> String {
            guard let month, let day else { return "[DATE]" }
            let yearText = year.map { yearWidth == 2 ? pad($0 % 100, 2) : String($0) }
            switch layout {
            case .yearFirst:
                return (yearText ?? "") + String(separator) + pad(month, firstWidth) + String(separator) + pad(day, secondWidth) + rest
            case .numeric(let monthFirst):
                let a = monthFirst ? pad(month, firstWidth) : pad(day, firstWidth)
                let b = monthFirst ? pad(day, secondWidth) : pad(month, secondWidth)
                var out = a + String(separator) + b
                if let yearText { out += String(separator) + yearText } else if trailingDot { out += "." }
                return out
            case .dayMonth:
                let name = FreeTextDates.styled(FreeTextDates.monthNames[month - 1], like: monthWord) + (monthDot ? "." : "")
                let ord = ordinalWord.isEmpty ? "" : FreeTextDates.styled(FreeTextDates.ordinal(day), like: ordinalWord)
                return String(day) + ord + middle + name + (yearText.map { yearGap + $0 } ?? "")
            case .monthDay:
                let name = FreeTextDates.styled(FreeTextDates.monthNames[month - 1], like: monthWord) + (monthDot ? "." : "")
                let ord = ordinalWord.isEmpty ? "" : FreeTextDates.styled(FreeTextDates.ordinal(day), like: ordinalWord)
                return name + middle + String(day) + ord + (yearText.map { yearGap + $0 } ?? "")
            }
        }
    }

    static func monthNumber(_ word: Substring) -> Int? {
        let w = word.lowercased()
        guard w.count >= 3 else { return nil }
        if w == "sept" { return 9 }
        return monthNames.firstIndex { $0 == w || ($0.hasPrefix(w) && w.count == 3) }.map { $0 + 1 }
    }

    static func digits(_ s: Substring) -> (value: Int, width: Int, rest: Substring)? {
        let end = s.firstIndex(where: { !$0.isASCII || !$0.isNumber }) ?? s.endIndex
        guard end > s.startIndex, let value = Int(s[..<end]) else { return nil }
        return (value, s.distance(from: s.startIndex, to: end), s[end...])
    }

    static func parse(_ text: Substring) -> Parsed? {
        guard let first = text.first, first.isASCII, first.isNumber else { return parseMonthFirst(text) }
        guard let a = digits(text), let sep = a.rest.first else { return nil }
        guard sep == "/" || sep == "-" || sep == "." else { return parseDayThenMonthWord(a) }
        guard let b = digits(a.rest.dropFirst()) else { return nil }
        return a.width == 4 ? parseYearFirst(a, b, separator: sep) : parseNumeric(a, b, separator: sep)
    }

    /// 2026-03-14, maybe with a time.
    private static func parseYearFirst(
        _ a: (value: Int, width: Int, rest: Substring), _ b: (value: Int, width: Int, rest: Substring), separator sep: Character
    ) -> Parsed? {
        guard let c = digits(b.rest.dropFirst()) else { return nil }
        var p = Parsed(layout: .yearFirst, year: a.value, month: b.value, day: c.value)
        p.separator = sep
        let padded = (b.width == 2 && b.value < 10) || (c.width == 2 && c.value < 10) || (b.width == 2 && c.width == 2) ? 2 : 1
        p.firstWidth = padded
        p.secondWidth = padded
        p.rest = c.rest
        return (1...12).contains(b.value) ? p : nil
    }

    /// 03/14/2026, 14.03.2026, 14.03., 3/14: which number is the month, and whether that is
    /// ambiguous (both 12 or less, not equal, no dots).
    private static func parseNumeric(
        _ a: (value: Int, width: Int, rest: Substring), _ b: (value: Int, width: Int, rest: Substring), separator sep: Character
    ) -> Parsed? {
        var year: Int?
        var yearWidth = 4
        var trailingDot = false
        if let next = b.rest.first, next == sep, let c = digits(b.rest.dropFirst()) {
            year = c.width == 2 ? (c.value < 50 ? 2000 + c.value : 1900 + c.value) : c.value
            yearWidth = c.width
        } else if sep == ".", b.rest.first == "." {
            trailingDot = true
        }
        let monthFirst: Bool
        var ambiguous = false
        if sep == "." {
            monthFirst = false
        } else if a.value > 12, b.value <= 12 {
            monthFirst = false
        } else if a.value <= 12, b.value > 12 || a.value == b.value {
            monthFirst = true
        } else if a.value <= 12, b.value <= 12 {
            monthFirst = true
            ambiguous = true
        } else {
            return nil
        }
        let month = monthFirst ? a.value : b.value
        let day = monthFirst ? b.value : a.value
        guard (1...12).contains(month), (1...31).contains(day) else { return nil }
        var p = Parsed(layout: .numeric(monthFirst: monthFirst), year: year, month: ambiguous ? nil : month, day: ambiguous ? nil : day)
        p.separator = sep
        // Zero-padded when either number was written with a leading zero (03/14, 14.03.).
        let padded = (a.width == 2 && a.value < 10) || (b.width == 2 && b.value < 10) || (a.width == 2 && b.width == 2) ? 2 : 1
        p.firstWidth = padded
        p.secondWidth = padded
        p.yearWidth = yearWidth
        p.trailingDot = trailingDot
        p.needsContext = year == nil && sep == "/" && !(a.width == 2 && b.width == 2)
        return p
    }

    /// 14th of March 2026, 14 March.
    private static func parseDayThenMonthWord(_ a: (value: Int, width: Int, rest: Substring)) -> Parsed? {
        var rest = a.rest
        let ordEnd = rest.firstIndex(where: { !$0.isLetter }) ?? rest.endIndex
        let ordinalWord = rest[..<ordEnd]
        guard ordinalWord.isEmpty || ["st", "nd", "rd", "th"].contains(ordinalWord.lowercased()) else { return nil }
        rest = rest[ordEnd...]
        let middleStart = rest.startIndex
        var cursor = rest.firstIndex(where: { $0.isLetter }) ?? rest.endIndex
        if rest[cursor...].lowercased().hasPrefix("of ") {
            let afterOf = rest.index(cursor, offsetBy: 2)
            cursor = rest[afterOf...].firstIndex(where: { $0.isLetter }) ?? rest.endIndex
        }
        let middle = rest[middleStart..<cursor]
        rest = rest[cursor...]
        let wordEnd = rest.firstIndex(where: { !$0.isLetter }) ?? rest.endIndex
        guard let month = monthNumber(rest[..<wordEnd]) else { return nil }
        var p = Parsed(layout: .dayMonth, year: nil, month: month, day: a.value)
        p.monthWord = rest[..<wordEnd]
        p.ordinalWord = ordinalWord
        p.middle = middle
        return parseYear(rest[wordEnd...], into: &p)
    }

    /// March 14th, 2026 / March 2026.
    private static func parseMonthFirst(_ text: Substring) -> Parsed? {
        let wordEnd = text.firstIndex(where: { !$0.isLetter }) ?? text.endIndex
        guard let month = monthNumber(text[..<wordEnd]) else { return nil }
        var rest = text[wordEnd...]
        var monthDot = false
        if rest.first == "." {
            monthDot = true
            rest = rest.dropFirst()
        }
        let gapEnd = rest.firstIndex(where: { $0.isNumber }) ?? rest.endIndex
        let middle = rest[..<gapEnd]
        guard let number = digits(rest[gapEnd...]) else { return nil }
        if number.width == 4 { return Parsed(layout: .monthDay, year: number.value, month: nil, day: nil) }  // March 2026
        var p = Parsed(layout: .monthDay, year: nil, month: month, day: number.value)
        p.monthWord = text[..<wordEnd]
        p.monthDot = monthDot
        p.middle = middle
        var after = number.rest
        let ordEnd = after.firstIndex(where: { !$0.isLetter }) ?? after.endIndex
        p.ordinalWord = after[..<ordEnd]
        after = after[ordEnd...]
        return parseYear(after, into: &p)
    }

    /// `, 2026` after a day and month, if there.
    static func parseYear(_ rest: Substring, into p: inout Parsed) -> Parsed? {
        let gapEnd = rest.firstIndex(where: { $0.isNumber }) ?? rest.endIndex
        if gapEnd < rest.endIndex, let year = digits(rest[gapEnd...]), year.width == 4 {
            p.year = year.value
            p.yearGap = rest[..<gapEnd]
        }
        if let day = p.day, !(1...31).contains(day) { return nil }
        return p
    }
}
