import CohortCore

/// The allow-list pass: the last pass of ``Scrubber/scrub(_:counts:shiftDays:)``, after the
/// patterns and the roster. Every word of the text that is still there either is known to be
/// safe or is replaced: see ``AllowListDecider`` for what "safe" means, word by word.
extension Scrubber {
    /// `text` with every word that is not known to be safe replaced by a typed token
    /// (`[NAME]`, `[ID]`, `[PHONE]`, `[DATE]`, `90 or older`) or `[REDACTED]`.
    func applyAllowList(_ text: String, counts: inout ScrubCounts) -> String {
        applyAllowList(text, counts: &counts, fastPath: true)
    }

    /// ``applyAllowList(_:counts:)``, with or without ``AllowListFastPath`` (the tests compare both).
    func applyAllowList(_ text: String, counts: inout ScrubCounts, fastPath: Bool) -> String {
        let scalars = Array(text.unicodeScalars)
        var workspace = LineWorkspace(capacity: scalars.count)
        workspace.load(text)
        let values = workspace.scalars
        values.withUnsafeBufferPointer { TextTokenizer.tokenize($0, into: &workspace) }
        let spans = values.withUnsafeBufferPointer { s -> [AllowListSpan] in
            if fastPath, AllowListFastPath.isPlainlySafe(s, workspace, vocabulary) { return [] }
            var decider = AllowListDecider(text: s, workspace: workspace, vocabulary: vocabulary, initials: index.initials)
            return decider.spans()
        }
        guard !spans.isEmpty else { return text }
        var output = String.UnicodeScalarView()
        var cursor = 0
        for span in spans where span.start >= cursor {
            output.append(contentsOf: scalars[cursor..<span.start])
            output.append(contentsOf: span.token.text.unicodeScalars)
            counts.add(span.token)
            cursor = span.end
        }
        output.append(contentsOf: scalars[cursor...])
        return String(output)
    }
}

/// A replaced range of a text (scalar offsets) and its token.
struct AllowListSpan: Sendable {
    var start: Int
    var end: Int
    var token: ScrubToken
}

/// Decides, word by word, what of a text may stay (the allow-list, see ``SafeVocabulary``).
///
/// - **Typed tokens** already in the text (`[NAME]`…) stay.
/// - **Words of letters**: a safe word stays (``SafeVocabulary``), except a capitalised one that
///   the dictionary also lists as a proper noun (`Will`, `Hope`) where the text says "person":
///   after a title or relation word (`my brother Will`), after "with"/"told"… inside a sentence,
///   before "said"/"called"…, possessive before a word that is no eponym head, or signing off
///   (`Thanks, Will` at the end of the text or a line). Anything else is replaced: `[NAME]` for a
///   known given name or a capitalised word in person context, `[REDACTED]` otherwise. One and
///   two letter words are safe only when listed (``SafeVocabulary/shortWords``): initials
///   (`J.`, `JF`) are not.
/// - **Numbers**: a run of digit groups joined by phone separators (` -./()`), with digits also
///   written as words (`five`, `oh`) or with the letter O for zero, counts its digits: 7 or more
///   is an identifier (`[PHONE]` for 10–15, a valid `yyyymmdd` is `[DATE]`, else `[ID]`), unless
///   it is one number followed by a unit (a dose or a measurement); a lone number of 5–6 digits
///   without a unit is `[ID]`; a date the date detector wrote (`2026-03-14`, `3/14/2026`) stays.
///   Shorter numbers stay (scores, counts, times, years), except ages over 89 after "I'm",
///   "aged", "turned"… or before "years"/"yo" (digits or words): `90 or older`.
/// - **Letters with digits**: a number glued to a unit (`500mg`, `8am`) and short codes
///   (`b12`, `d3`) stay; a compact date (`04SEP1976`, `20260314T0800`) is `[DATE]`; anything
///   else `[ID]`.
/// - **Dates in words**: an ordinal (`the 7th`, `eighth`, `twenty-third`) before "of" and a
///   month, or a month with an ordinal word, is `[DATE]` with its year; `the 7th` alone is a
///   date unless a noun follows (`the 2nd dose`); a holiday with a year (`Christmas 2025`) is
///   `[DATE]`.
struct AllowListDecider {
    let s: UnsafeBufferPointer<UInt32>
    let tokens: [PackedToken]
    let keys: [String]
    let vocabulary: SafeVocabulary
    /// The roster's initials run together (`jd`): a word of 2–3 capitals equal to one is a name.
    let initials: Set<String>
    private var replaced: [ScrubToken?]
    /// A replacement covering several words: first word → last word.
    private var spanEnd: [Int: Int] = [:]

    init(text: UnsafeBufferPointer<UInt32>, workspace: LineWorkspace, vocabulary: SafeVocabulary, initials: Set<String>) {
        self.initials = initials
        s = text
        tokens = Array(workspace.tokens[0..<workspace.tokenCount])
        keys = tokens.map { workspace.keyString($0) }
        self.vocabulary = vocabulary
        replaced = [ScrubToken?](repeating: nil, count: workspace.tokenCount)
    }

    static let units: Set<String> = [
        "mg", "mcg", "ug", "g", "kg", "ml", "l", "iu", "units", "unit", "u", "mmhg", "bpm", "steps", "step", "km", "m", "mi",
        "miles", "mile", "cm", "mm", "in", "ft", "lb", "lbs", "oz", "kcal", "cal", "calories", "percent", "h", "hr", "hrs",
        "hour", "hours", "min", "mins", "minute", "minutes", "s", "sec", "secs", "seconds", "ms", "day", "days", "week",
        "weeks", "month", "months", "year", "years", "yr", "yrs", "x", "times", "tablet", "tablets", "tab", "tabs", "pills",
        "pill", "puffs", "drops", "mmol", "mg/dl", "degrees", "c", "f", "am", "pm", "meters", "metres", "feet", "pounds",
        "kilos", "grams", "liters", "litres", "beats", "breaths", "floors", "flights", "reps", "sets", "nights", "doses",
    ]
    static let digitWords: [String: Int] = [
        "zero": 1, "oh": 1, "o": 1, "one": 1, "two": 1, "three": 1, "four": 1, "five": 1, "six": 1, "seven": 1, "eight": 1,
        "nine": 1, "ten": 2, "eleven": 2, "twelve": 2, "thirteen": 2, "fourteen": 2, "fifteen": 2, "sixteen": 2, "seventeen": 2,
        "eighteen": 2, "nineteen": 2, "twenty": 2, "thirty": 2, "forty": 2, "fifty": 2, "sixty": 2, "seventy": 2, "eighty": 2,
        "ninety": 2, "hundred": 2, "double": 0, "triple": 0,
    ]
    static let ordinalWords: Set<String> = [
        "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh", "twelfth",
        "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth", "twentieth", "thirtieth",
    ]
    static let monthKeys: Set<String> = [
        "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
        "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    ]
    static let holidays: Set<String> = [
        "christmas", "xmas", "easter", "thanksgiving", "halloween", "hanukkah", "diwali", "eid", "ramadan", "passover",
        "midsummer", "newyear", "newyears",
    ]
    static let ageBefore: Set<String> = ["im", "aged", "age", "turned", "turning", "turn", "am"]
    static let ageAfter: Set<String> = ["years", "year", "yrs", "yr", "yo", "y"]
    static let signOffs: Set<String> = [
        "thanks", "thank", "cheers", "love", "regards", "best", "signed", "sincerely", "yours", "xo", "xx", "xoxo", "from",
        "ta", "warmly", "hugs",
    ]
    /// Words after an ordinal that make it a date rather than a count (`the 7th of`, `the 7th I`).
    static let dateFollowers: Set<String> = [
        "of", "at", "in", "on", "and", "or", "when", "i", "we", "was", "is", "my", "the", "to", "for", "from", "till", "until",
        "before", "after", "around", "but", "so", "then", "this", "that", "it",
    ]

    func isMarker(_ t: Int) -> Bool { ResidualScanner.isMarker(tokens[t], in: s) }

    func isDigits(_ t: Int) -> Bool { tokens[t].keyLength > 0 && keys[t].utf8.allSatisfy { $0 &- 0x30 < 10 } }

    /// Whether only spaces and phone separators (at most three) stand between words `a` and `b`.
    func numberGap(_ a: Int, _ b: Int) -> Bool {
        let from = tokens[a].end
        let to = tokens[b].start
        guard to - from <= 3 else { return false }
        for i in from..<to {
            switch s[i] {
            case 0x20, 0x2D, 0x2E, 0x28, 0x29, 0x2F, 0xA0, 0x2013: continue
            default: return false
            }
        }
        return true
    }

    /// Whether words `a` and `b` are digits spelled as words with a comma between them (`two
    /// four eight, five four four`): a phone read out in groups.
    func spelledDigitsGap(_ a: Int, _ b: Int) -> Bool {
        guard !isDigits(a), !isDigits(b), Self.digitWords[keys[a]] != nil, Self.digitWords[keys[b]] != nil else { return false }
        let from = tokens[a].end
        let to = tokens[b].start
        guard to - from <= 3, to > from, s[from] == 0x2C else { return false }
        return (from + 1..<to).allSatisfy { s[$0] == 0x20 }
    }

    /// Whether words `a` and `b` are in one phrase (a short gap without a line break).
    func gap(_ a: Int, _ b: Int) -> Bool { TextTokenizer.isPhraseGap(s, from: tokens[a].end, to: tokens[b].start) }

    /// Whether a sentence or line ends between words `a` and `b` (`a` before `b`).
    func sentenceBreak(_ a: Int, _ b: Int) -> Bool {
        for i in tokens[a].end..<tokens[b].start {
            switch s[i] {
            case 0x2E, 0x21, 0x3F, 0x0A, 0x0D, 0x3A, 0x3B: return !(tokens[a].keyLength <= 3 && Scrubber.abbreviatedTitles.contains(keys[a]))
            default: continue
            }
        }
        return false
    }

    /// Digits a word stands for in a number run: its digits, a digit word's count, or nil.
    func digitCount(_ t: Int) -> Int? {
        let key = keys[t]
        if isDigits(t) { return key.utf8.count }
        if let n = Self.digitWords[key] { return n }
        // Digits with the letter O for zero (`9O7`), at least one real digit.
        var digits = 0
        var letters = 0
        for b in key.utf8 {
            if b &- 0x30 < 10 { digits += 1 } else if b == 0x6F { letters += 1 } else { return nil }
        }
        return digits > 0 ? digits + letters : nil
    }

    private mutating func replace(_ first: Int, _ last: Int, _ token: ScrubToken) {
        for t in first...last { replaced[t] = token }
        if last > first { spanEnd[first] = last }
    }

    /// The replaced ranges, in text order.
    mutating func spans() -> [AllowListSpan] {
        let n = tokens.count
        hexGroups()
        numbers()
        wordDates()
        spelledLetters()
        for t in 0..<n where replaced[t] == nil && !isMarker(t) {
            if let token = decideWord(t) { replace(t, t, token) }
        }
        var result: [AllowListSpan] = []
        var t = 0
        while t < n {
            guard let token = replaced[t] else {
                t += 1
                continue
            }
            var last = spanEnd[t] ?? t
            // Neighbouring words of one kind become one token (`[REDACTED]`, not three).
            while last + 1 < n, replaced[last + 1] == token, spanEnd[last + 1] == nil, gap(last, last + 1), !sentenceBreak(last, last + 1) {
                last += 1
            }
            var end = tokens[last].end
            // A name keeps its possessive (`[NAME]'s`).
            if token == .name, tokens[last].isPossessive { end = tokens[last].coreEnd }
            var start = tokens[t].start
            // A phone's leading `+` or `(` goes with it.
            if token == .phone || token == .id, start > 0, s[start - 1] == 0x2B || s[start - 1] == 0x28 { start -= 1 }
            if token == .phone || token == .id, end < s.count, s[end] == 0x29 { end += 1 }
            result.append(AllowListSpan(start: start, end: end, token: token))
            t = last + 1
        }
        return result
    }

    // MARK: Numbers

    private mutating func numbers() {
        let n = tokens.count
        var t = 0
        while t < n {
            guard replaced[t] == nil, !isMarker(t), let first = digitCount(t), isDigits(t) || tokens[t].keyLength > 1 || first > 0 else {
                t += 1
                continue
            }
            // A run of number words alone needs digits or several words to be a number.
            var last = t
            var digits = first
            var hasRealDigits = isDigits(t) || keys[t].utf8.contains { $0 &- 0x30 < 10 }
            while last + 1 < n, replaced[last + 1] == nil, !isMarker(last + 1) {
                // "a hundred and four": `and` after `hundred` joins the number words around it.
                if keys[last] == "hundred", keys[last + 1] == "and", last + 2 < n, gap(last, last + 1), gap(last + 1, last + 2),
                    let more = digitCount(last + 2), !isDigits(last + 2)
                {
                    last += 2
                    digits += more
                    continue
                }
                guard numberGap(last, last + 1) || spelledDigitsGap(last, last + 1), let more = digitCount(last + 1) else { break }
                // `o`/`oh` continue a run only next to other digits.
                last += 1
                digits += more
                if isDigits(last) || keys[last].utf8.contains(where: { $0 &- 0x30 < 10 }) { hasRealDigits = true }
            }
            // Trailing `o`/`oh` words that are not followed by digits are words, not zeros.
            while last > t, ["o", "oh"].contains(keys[last]) {
                digits -= 1
                last -= 1
            }
            // Keypad letters glued to the digits (`1-800-FLOWERS`, `274-382-CAKE`): a phone.
            if hasRealDigits, digits >= 3, last + 1 < n, replaced[last + 1] == nil, !isMarker(last + 1),
                tokens[last + 1].start == tokens[last].end + 1, s[tokens[last].end] == 0x2D, isKeypadGroup(last + 1),
                (3...8).contains(tokens[last + 1].keyLength), digits + tokens[last + 1].keyLength >= 7
            {
                replace(t, last + 1, .phone)
                t = last + 2
                continue
            }
            decideNumberRun(t, last, digits: digits, hasRealDigits: hasRealDigits)
            t = last + 1
        }
    }

    private mutating func decideNumberRun(_ first: Int, _ last: Int, digits: Int, hasRealDigits: Bool) {
        let single = first == last
        if hasRealDigits, isMonthDay(first, last) {
            replace(first, last, .date)
            return
        }
        if single, isDigits(first), digits <= 5, let end = streetEnd(after: first) {
            replace(first, end, .address)
            return
        }
        let nextKey = last + 1 < tokens.count && gap(last, last + 1) ? keys[last + 1] : nil
        let hasUnit = nextKey.map { Self.units.contains($0) } ?? false
        if !hasRealDigits {
            // Digits spelled as words: an identifier from 7 on; an age over 89 (`ninety-three`).
            if digits >= 7 && last - first >= 5 {
                replace(first, last, .phone)
            } else if keys[first] == "ninety" || keys[first] == "hundred" || (first + 1 <= last && keys[first + 1] == "hundred") {
                // "a hundred (and four)": the article is part of the number.
                let start = keys[first] == "hundred" && first > 0 && keys[first - 1] == "a" && gap(first - 1, first) ? first - 1 : first
                if isAgeContext(start, last) { replace(start, last, .age) }
            }
            return
        }
        if digits >= 7 {
            if single, hasUnit { return }
            if isFormattedDate(first, last) { return }
            if single, digits == 8, isDigits(first), isCompactDate(keys[first]) {
                replace(first, last, .date)
            } else if digits >= 10 && digits <= 15 {
                replace(first, last, .phone)
            } else {
                replace(first, last, .id)
            }
            return
        }
        if single, isDigits(first) {
            if digits >= 5 {
                if !hasUnit { replace(first, last, .id) }
                return
            }
            let written = last + 2 < tokens.count && keys[last + 1] == "or" && keys[last + 2] == "older"
            if let value = Int(keys[first]), value >= 90, value < 130, !written, isAgeContext(first, last) { replace(first, last, .age) }
        }
    }

    /// Scores out of 2, 3, 4, 5, 10 or 100 (`7/10`, `1/2`): no date.
    static let scoreDenominators: Set<Int> = [2, 3, 4, 5, 10, 100]
    /// Words before a month/day pair that make it a date even when it reads as a score.
    static let dateContext: Set<String> = [
        "born", "dob", "birthday", "bday", "on", "since", "from", "until", "till", "by", "before", "after", "date", "dated",
        "due", "appt", "appointment", "visit", "seen",
    ]

    /// Whether words `first…last` are `m/d` without a year (`8/31`, `11/8`): a month and a
    /// day joined by a slash that is not a score (`7/10`, `1/2`) unless a date word comes
    /// before it (`born 2/5`).
    private func isMonthDay(_ first: Int, _ last: Int) -> Bool {
        guard last == first + 1, isDigits(first), isDigits(last), tokens[last].start == tokens[first].end + 1,
            s[tokens[first].end] == 0x2F, let a = Int(keys[first]), let b = Int(keys[last]), keys[first].utf8.count <= 2,
            keys[last].utf8.count <= 2, (1...12).contains(a), (1...31).contains(b)
        else { return false }
        // Not part of a longer date or fraction (`1/2/3`, `3/4.5`).
        if tokens[last].end < s.count, s[tokens[last].end] == 0x2F || (s[tokens[last].end] == 0x2E && tokens[last].end + 1 < s.count && s[tokens[last].end + 1] &- 0x30 < 10) { return false }
        if tokens[first].start > 0, s[tokens[first].start - 1] == 0x2F || s[tokens[first].start - 1] == 0x2E { return false }
        // Right after a word the date detector takes as date context (`on 3/14`), it has been
        // shifted already.
        if first > 0, FreeTextDates.contextWords.contains(keys[first - 1]) || FreeTextDates.weekdayIndex(Substring(keys[first - 1])) != nil {
            return false
        }
        let context = (max(0, first - 3)..<first).contains { Self.dateContext.contains(keys[$0]) }
        if Self.scoreDenominators.contains(b), a <= b, !context { return false }
        return true
    }

    static let streetSuffixes: Set<String> = [
        "street", "st", "avenue", "ave", "road", "rd", "lane", "ln", "drive", "dr", "boulevard", "blvd", "court", "ct", "place",
        "pl", "way", "terrace", "ter", "circle", "cir", "parkway", "pkwy", "highway", "hwy", "square", "sq", "trail", "trl",
        "close", "crescent", "row", "alley", "strasse", "str",
    ]
    /// Words that are no part of a street name (`2 miles down the road`).
    static let notStreetWords: Set<String> = [
        "the", "a", "an", "my", "our", "his", "her", "their", "down", "up", "to", "on", "of", "in", "at", "and", "or", "by",
        "from", "for", "with", "across", "along", "off", "times", "more", "other",
    ]

    /// The last word of a street address starting with the house number at `t`: one to three
    /// words of a street name, then a street suffix (`12 oak lane`, `7 St John's Road`).
    private func streetEnd(after t: Int) -> Int? {
        var k = t + 1
        while k < tokens.count, k - t <= 4, gap(k - 1, k), !isMarker(k), !sentenceBreak(k - 1, k) {
            let key = keys[k]
            if k > t + 1, Self.streetSuffixes.contains(key) { return k }
            if Self.notStreetWords.contains(key) || Self.units.contains(key) || isDigits(k) { return nil }
            k += 1
        }
        return nil
    }

    /// Whether words `first…last` (digits or number words) are an age: after "I'm", "aged",
    /// "turned"…, or before "years"/"yo".
    private func isAgeContext(_ first: Int, _ last: Int) -> Bool {
        if first > 0, gap(first - 1, first), Self.ageBefore.contains(keys[first - 1]) { return true }
        // "my age is 95", "age: 95", "age was 95".
        if first > 1, gap(first - 1, first), ["is", "was", "of", "now"].contains(keys[first - 1]), keys[first - 2] == "age" { return true }
        if last + 1 < tokens.count, gap(last, last + 1), Self.ageAfter.contains(keys[last + 1]) { return true }
        return false
    }

    /// Whether `key` (8 digits) is a date `yyyymmdd` from 1900 to 2099.
    private func isCompactDate(_ key: String) -> Bool {
        guard let value = Int(key) else { return false }
        let year = value / 10_000
        let month = value / 100 % 100
        let day = value % 100
        return (1900...2099).contains(year) && (1...12).contains(month) && (1...31).contains(day)
    }

    /// Whether words `first…last` are three numbers joined by one of `-/.` as a date the date
    /// detector shifts (`2026-03-14`, `14/03/2026`): it has already been shifted.
    private func isFormattedDate(_ first: Int, _ last: Int) -> Bool {
        guard last - first == 2, (first...last).allSatisfy(isDigits) else { return false }
        let a = keys[first].utf8.count
        let b = keys[first + 1].utf8.count
        let c = keys[last].utf8.count
        guard b <= 2, (a == 4 && c <= 2) || (a <= 2 && (c == 4 || c == 2)) else { return false }
        let sep1 = tokens[first + 1].start - tokens[first].end == 1 ? s[tokens[first].end] : 0
        let sep2 = tokens[last].start - tokens[first + 1].end == 1 ? s[tokens[first + 1].end] : 0
        return sep1 == sep2 && (sep1 == 0x2D || sep1 == 0x2F || sep1 == 0x2E)
    }

    // MARK: Hardware addresses and letters spelled out

    /// Five or more groups of hexadecimal characters joined by one `:` or `-` with nothing
    /// else between them, ten or more characters in all with a digit among them (a MAC or
    /// Bluetooth address, an IPv6 address, a UUID): `[ID]`. Times and dates have three groups.
    private mutating func hexGroups() {
        let n = tokens.count
        func isHex(_ k: Int) -> Bool {
            !isMarker(k) && tokens[k].isASCII && (1...12).contains(tokens[k].keyLength)
                && keys[k].utf8.allSatisfy { $0 &- 0x30 < 10 || $0 &- 0x61 < 6 }
        }
        var t = 0
        while t < n {
            guard isHex(t) else {
                t += 1
                continue
            }
            var last = t
            var separator: UInt32 = 0
            while last + 1 < n, isHex(last + 1), tokens[last + 1].start == tokens[last].end + 1 {
                let c = s[tokens[last].end]
                guard c == 0x3A || c == 0x2D, separator == 0 || c == separator else { break }
                separator = c
                last += 1
            }
            let characters = (t...last).reduce(0) { $0 + tokens[$1].keyLength }
            let hasDigit = (t...last).contains { keys[$0].utf8.contains { $0 &- 0x30 < 10 } }
            if last - t >= 4, characters >= 10, hasDigit { replace(t, last, .id) }
            t = last + 1
        }
    }

    /// Four or more single letters in a row, each apart by one space, dash or dot (`F-E-A-T`,
    /// `o t t i l i e`, `K.E.Z.I`): a word spelled out letter by letter, `[REDACTED]`.
    private mutating func spelledLetters() {
        let n = tokens.count
        func letter(_ k: Int) -> Bool {
            replaced[k] == nil && !isMarker(k) && keys[k].count == 1 && keys[k].first?.isLetter == true
        }
        func joined(_ a: Int, _ b: Int) -> Bool {
            let from = tokens[a].end
            let to = tokens[b].start
            guard to > from, to - from <= 2 else { return to == from }
            return (from..<to).allSatisfy { s[$0] == 0x20 || s[$0] == 0x2D || s[$0] == 0x2E }
        }
        var t = 0
        while t < n {
            guard letter(t) else {
                t += 1
                continue
            }
            var last = t
            while last + 1 < n, letter(last + 1), joined(last, last + 1) { last += 1 }
            if last - t >= 3 { replace(t, last, .redacted) }
            t = last + 1
        }
    }

    // MARK: Dates in words

    /// The last word of an ordinal written in words at `k` (`third`, `twenty-third`), if any.
    private func ordinalWordEnd(_ k: Int) -> Int? {
        guard k < tokens.count else { return nil }
        if Self.ordinalWords.contains(keys[k]) { return k }
        if ["twenty", "thirty"].contains(keys[k]), k + 1 < tokens.count, numberGap(k, k + 1), Self.ordinalWords.contains(keys[k + 1]) {
            return k + 1
        }
        return nil
    }

    private mutating func wordDates() {
        let n = tokens.count
        for t in 0..<n where replaced[t] == nil && !isMarker(t) {
            let key = keys[t]
            let isOrdinalDigits = isOrdinalNumber(key)
            let isOrdinalWord = Self.ordinalWords.contains(key)
            if isOrdinalDigits || isOrdinalWord {
                // A compound ordinal word: `twenty-third`.
                var first = t
                if isOrdinalWord, t > 0, ["twenty", "thirty"].contains(keys[t - 1]), numberGap(t - 1, t) { first = t - 1 }
                if let monthEnd = monthAfter(t) {
                    // `14th of March` in digits is the date detector's, shifted already.
                    if isOrdinalWord { replace(first, yearAfter(monthEnd) ?? monthEnd, .date) }
                } else if isOrdinalDigits, first > 0, ["the", "on"].contains(keys[first - 1]) {
                    let next = t + 1 < n && gap(t, t + 1) ? t + 1 : nil
                    let followedByNoun = next.map { !Self.dateFollowers.contains(keys[$0]) && !tokens[$0].isCapitalized } ?? false
                    if !followedByNoun { replace(first, t, .date) }
                }
                continue
            }
            // A month with an ordinal after it: `July twenty-third`, `May the third`, `June the 4th`.
            if Self.monthKeys.contains(key), tokens[t].isCapitalized, t + 1 < n, gap(t, t + 1) {
                let k = keys[t + 1] == "the" && t + 2 < n && gap(t + 1, t + 2) ? t + 2 : t + 1
                // `March 14th` is the date detector's (shifted already); `March the 14th` is not.
                if let end = ordinalWordEnd(k) ?? (k == t + 2 && isOrdinalNumber(keys[k]) ? k : nil) {
                    replace(t, yearAfter(end) ?? end, .date)
                    continue
                }
            }
            // A holiday with its year: `Christmas 2025`.
            if Self.holidays.contains(key), let year = yearAfter(t) {
                replace(t, year, .date)
            }
        }
    }

    /// Whether `key` is a day of the month written as an ordinal (`7th`, `31st`).
    private func isOrdinalNumber(_ key: String) -> Bool {
        let digits = key.prefix(while: \.isNumber)
        guard (1...2).contains(digits.count), let day = Int(digits), (1...31).contains(day) else { return false }
        return ["st", "nd", "rd", "th"].contains(String(key.dropFirst(digits.count)))
    }

    /// The month word after the ordinal at `t` (`7th of March`, `7th March`), if any.
    private func monthAfter(_ t: Int) -> Int? {
        var m = t + 1
        guard m < tokens.count, gap(t, m) else { return nil }
        if keys[m] == "of", m + 1 < tokens.count, gap(m, m + 1) { m += 1 }
        return Self.monthKeys.contains(keys[m]) && (tokens[m].isCapitalized || keys[m].count > 3) ? m : nil
    }

    /// The year right after word `t` (`, 1961`), if any.
    private func yearAfter(_ t: Int) -> Int? {
        let y = t + 1
        guard y < tokens.count, tokens[y].start - tokens[t].end <= 2, isDigits(y), keys[y].utf8.count == 4 || keys[y].utf8.count == 2
        else { return nil }
        return y
    }

    // MARK: Words

    private func decideWord(_ t: Int) -> ScrubToken? {
        let token = tokens[t]
        let key = keys[t]
        var hasDigit = false
        var hasLetter = false
        for b in key.utf8 {
            if b &- 0x30 < 10 { hasDigit = true } else { hasLetter = true }
        }
        if !token.isASCII { hasLetter = true }
        if token.start > 0, s[token.start - 1] == 0x40 { return .redacted }
        if hasDigit {
            // Numbers were decided above; a word of digits that is still here stays.
            guard hasLetter else { return nil }
            return decideAlphanumeric(t)
        }
        // A handle (`@jfeatherstone`, `@1`): whatever follows an `@` that was no email.
        if token.start > 0, s[token.start - 1] == 0x40 { return .redacted }
        // Roster initials written in capitals (`JD`).
        if key.utf8.count >= 2, key.utf8.count <= 3, initials.contains(key), isAllCapitals(t) { return .name }
        // Words glued by a dot or underscore (`jane.doe`, `j_doe`): a handle or email part.
        if isGlued(t) { return .redacted }
        let safe: Bool
        if token.isASCII {
            // The packed token's hash is the table's key hash: one probe, no allocation.
            safe = key.utf8.count <= 2 ? SafeVocabulary.shortWords.contains(key) : vocabulary.contains(hash: token.hash, key: key)
        } else {
            safe = vocabulary.contains(key)
        }
        if safe {
            if token.isCapitalized, key.utf8.count >= 2, isAmbiguousName(key), isPersonContext(t) { return .name }
            if token.isCapitalized, key.utf8.count >= 2, isRelationApposition(t) { return .name }
            // A capital letter with a dot is an initial (`J.`) unless it follows a word such as
            // "vitamin" or "type".
            if key.utf8.count == 1, token.isCapitalized, (key != "i" && key != "a") || isInitialPair(t), isInitial(t) { return .name }
            return nil
        }
        if key.utf8.count == 1 {
            // Single letters: kept unless written as an initial.
            return token.isCapitalized && isInitial(t) ? .name : nil
        }
        if token.isCapitalized, FirstNames.names.contains(key) || isPersonContext(t) { return .name }
        return .redacted
    }

    /// Whether the word at `t` is capitals and digits with two capitals or more (`FLOWERS`,
    /// `11NR`; not the `T` of an ISO date-time).
    private func isKeypadGroup(_ t: Int) -> Bool {
        let range = tokens[t].start..<tokens[t].coreEnd
        return range.allSatisfy { s[$0] &- 0x41 < 26 || s[$0] &- 0x30 < 10 } && range.filter { s[$0] &- 0x41 < 26 }.count >= 2
    }

    /// Whether the word at `t` is written in capitals only.
    private func isAllCapitals(_ t: Int) -> Bool {
        (tokens[t].start..<tokens[t].coreEnd).allSatisfy { s[$0] &- 0x41 < 26 }
    }

    /// Whether the word at `t` is glued to a word of letters by a dot or an underscore with no
    /// space (`jane.doe`, `doe_j`): a handle or an email's local part, never English.
    private func isGlued(_ t: Int) -> Bool {
        func joiner(_ i: Int) -> Bool { s[i] == 0x2E || s[i] == 0x5F }
        func letters(_ k: Int) -> Bool { keys[k].utf8.count >= 2 && !isDigits(k) && !isMarker(k) }
        // An underscore glues anything (`ignatius_p`, `_w`): no English word has one.
        if t + 1 < tokens.count, tokens[t].end < s.count, s[tokens[t].end] == 0x5F, tokens[t + 1].start == tokens[t].end + 1, !isMarker(t + 1) {
            return true
        }
        if t > 0, tokens[t].start > 0, s[tokens[t].start - 1] == 0x5F, tokens[t].start == tokens[t - 1].end + 1, !isMarker(t - 1) { return true }
        guard letters(t) else { return false }
        // A neighbour already replaced counts (`[NAME].kara`): its `]` or `[` touches the joiner.
        if t + 1 < tokens.count, tokens[t].end + 1 < s.count, joiner(tokens[t].end),
            tokens[t + 1].start == tokens[t].end + 1 ? letters(t + 1) : (s[tokens[t].end + 1] == 0x5B && isMarker(t + 1))
        {
            return true
        }
        if t > 0, tokens[t].start >= 2, joiner(tokens[t].start - 1),
            tokens[t].start == tokens[t - 1].end + 1 ? letters(t - 1) : (s[tokens[t].start - 2] == 0x5D && isMarker(t - 1))
        {
            return true
        }
        return false
    }

    /// Whether the single letter at `t` is one of two initials (`A.A.`, `J. K.`).
    private func isInitialPair(_ t: Int) -> Bool {
        func single(_ k: Int) -> Bool { k >= 0 && k < tokens.count && tokens[k].keyLength == 1 && tokens[k].isCapitalized && isInitial(k) }
        return (t + 1 < tokens.count && gap(t, t + 1) && single(t + 1)) || (t > 0 && gap(t - 1, t) && single(t - 1))
    }

    /// Whether `key` is a safe word that is also a personal name.
    private func isAmbiguousName(_ key: String) -> Bool {
        vocabulary.isProperNoun(key) || FirstNames.names.contains(key) || Nicknames.table[key] != nil || Nicknames.formalNames[key] != nil
    }

    private static let letterLabels: Set<String> = [
        "vitamin", "type", "hepatitis", "hep", "plan", "grade", "stage", "class", "option", "group", "part", "section", "level",
        "phase", "category", "block", "ward", "wing", "floor", "room", "bay", "row", "unit", "zone", "step", "appendix", "list",
    ]

    /// Whether the single capital letter at `t` is an initial: followed by a dot (not a
    /// sentence end before a capitalised word of a new sentence is told apart: both count), and
    /// not after a label word (`vitamin D.`).
    private func isInitial(_ t: Int) -> Bool {
        let end = tokens[t].end
        guard end < s.count, s[end] == 0x2E else { return false }
        if t > 0, gap(t - 1, t), Self.letterLabels.contains(keys[t - 1]) { return false }
        return true
    }

    /// Whether the capitalised word at `t` is written as a person: after a title or relation
    /// word, after "with"/"told"… inside a sentence, before "said"/"called"…, possessive before
    /// a word that is no eponym head or calendar word, or signing off.
    private func isPersonContext(_ t: Int) -> Bool {
        let n = tokens.count
        if t > 0, gap(t - 1, t), !sentenceBreak(t - 1, t) {
            let previous = keys[t - 1]
            if Scrubber.titles.contains(previous) || Scrubber.relations.contains(previous) { return true }
            if Scrubber.interactions.contains(previous) { return true }
        }
        if t + 1 < n, gap(t, t + 1), !sentenceBreak(t, t + 1) {
            let next = keys[t + 1]
            if Scrubber.personVerbs.contains(next), !tokens[t].isPossessive { return true }
            if tokens[t].isPossessive, !Scrubber.eponymHeads.contains(next), !ClinicalVocabulary.calendar.contains(next) { return true }
        }
        // Next to a name already replaced (`Dawn [NAME].`).
        if t + 1 < n, gap(t, t + 1), isMarker(t + 1), keys[t + 1] == "name" { return true }
        if t > 0, gap(t - 1, t), isMarker(t - 1), keys[t - 1] == "name" { return true }
        // "This is Will", "call Will", "Will here," opening a sentence.
        if t > 1, keys[t - 1] == "is", keys[t - 2] == "this", gap(t - 1, t) { return true }
        if t > 0, gap(t - 1, t), Scrubber.callWords.contains(keys[t - 1]) { return true }
        if t + 1 < n, gap(t, t + 1), Scrubber.selfReferences.contains(keys[t + 1]), t == 0 || sentenceBreak(t - 1, t) { return true }
        // A sign-off: "Thanks, Will" / "Love,\nHope" at the end of the text or a line.
        if t > 0, Self.signOffs.contains(keys[t - 1]) {
            let atEnd = t + 1 >= n || (tokens[t].end..<tokens[t + 1].start).contains { s[$0] == 0x0A } || !gap(t, t + 1)
            if atEnd { return true }
        }
        return false
    }

    /// Whether the capitalised word at `t` is followed by a relation in apposition, closed by
    /// punctuation (`Baker, my stepdad, drove me`; `Hill, our neighbour.`): then it names a person.
    private func isRelationApposition(_ t: Int) -> Bool {
        let n = tokens.count
        guard t + 2 < n, tokens[t + 1].start > tokens[t].end, s[tokens[t].end] == 0x2C,
            (tokens[t].end + 1..<tokens[t + 1].start).allSatisfy({ s[$0] == 0x20 }),
            ["my", "our", "his", "her", "their", "your"].contains(keys[t + 1]), gap(t + 1, t + 2), Scrubber.relations.contains(keys[t + 2])
        else { return false }
        var last = t + 2
        // `brother-in-law`, `step-dad`.
        while last + 1 < n, tokens[last + 1].start == tokens[last].end + 1, s[tokens[last].end] == 0x2D { last += 1 }
        let end = tokens[last].end
        guard end < s.count else { return true }
        switch s[end] {
        case 0x2C, 0x2E, 0x3B, 0x3A, 0x29, 0x0A, 0x21, 0x3F: return true
        default: return false
        }
    }

    /// A word of letters and digits: a number with a unit or a short code stays; a compact date
    /// is `[DATE]`; anything else `[ID]`.
    private func decideAlphanumeric(_ t: Int) -> ScrubToken? {
        let key = keys[t]
        if vocabulary.contains(key) { return nil }
        let leadingDigits = key.prefix(while: \.isNumber)
        let rest = key.dropFirst(leadingDigits.count)
        if !leadingDigits.isEmpty, !rest.isEmpty, rest.allSatisfy(\.isLetter) {
            if Self.units.contains(String(rest)) && leadingDigits.count <= 5 { return nil }
            if isOrdinalNumber(key) { return nil }
            // `04SEP1976`-like dates are caught below; `2x`, `3rd`: fine.
            if leadingDigits.count <= 2, rest.count <= 2 { return nil }
        }
        if key.utf8.count <= 3 { return nil }  // b12, d3, q8h
        // The day and hour of an ISO date-time the date detector wrote (`2026-04-13T08:30`).
        if key.utf8.count == 5, key.dropFirst(2).first == "t", tokens[t].start > 0, s[tokens[t].start - 1] == 0x2D,
            tokens[t].end < s.count, s[tokens[t].end] == 0x3A
        {
            return nil
        }
        // Compact dates: `04sep1976`, `20260314t0800`.
        if key.count >= 7 {
            let letters = key.filter(\.isLetter)
            if Self.monthKeys.contains(letters) { return .date }
            let digits = key.prefix(while: \.isNumber)
            if digits.count == 8, isCompactDate(String(digits)) { return .date }
        }
        return .id
    }
}
