import Foundation
import CohortCore

/// Every identifier of a roster in matchable form: word-key phrases (names, emails, addresses,
/// device names, MRNs, codes, written-out birth dates), phone digits and birth dates.
///
/// Built once from a ``Source`` and kept only in compiled form (flat arrays and open-addressing
/// tables, see ``KeyLookup`` and ``NumberSet``), about a kilobyte per participant; lookups are
/// hash probes per word, so the cost does not grow with the roster.
struct IdentifierIndex: Sendable {
    /// What the index is for: the scrubber replaces every name word of 3+ letters; the residual
    /// scanner flags full names, and any name word of 3+ letters alone unless it is ordinary or
    /// clinical vocabulary (``ClinicalVocabulary``): such a word (`Field`, `Hope`) counts only
    /// inside a full name, first and last name together, after a title (`Mr Field`) or as a
    /// capitalized possessive (`Field's`).
    enum Mode: Sendable {
        case scrubber
        case scanner
    }

    struct Match: Sendable {
        var firstToken: Int
        var lastToken: Int
        var kind: IdentifierKind
    }

    /// The roster's identifiers as they are collected, in the plain form the compiled index is
    /// built from (and the tests' reference scanner matches against).
    struct Source: Sendable {
        struct Phrase: Sendable {
            var keys: [String]
            var kind: IdentifierKind
            /// Matched only when the first word is capitalized in the text (nicknames).
            var requiresCapital: Bool
        }

        /// First word key → phrases starting with it, longest first.
        private(set) var phrases: [String: [Phrase]] = [:]
        /// Last 10 digits of every roster phone with 10 or more digits.
        private(set) var phones10: Set<String> = []
        /// Every roster phone's last 7 digits (the local form).
        private(set) var phones7: Set<String> = []
        /// The last 7, 8, 9 and 10 digits of every roster phone (scanner: a digit run of that
        /// length equal to one of them is the phone).
        private(set) var phoneSuffixes: Set<String> = []
        /// Scanner: roster name words that are vocabulary, found alone only as a capitalized
        /// possessive (`Field's`).
        private(set) var possessiveNames: Set<String> = []
        /// Birth dates: month·100 + day → full years and two-digit years.
        private(set) var birthDays: [Int: Set<Int>] = [:]
        private(set) var birthDaysShortYear: [Int: Set<Int>] = [:]

        init(roster: [Participant], mode: Mode) {
            var inserted: Set<PhraseIdentity> = []
            for participant in roster {
                add(participant, mode: mode, &inserted)
            }
            for key in phrases.keys {
                phrases[key]?.sort { $0.keys.count > $1.keys.count }
            }
        }

        private struct PhraseIdentity: Hashable {
            var keys: [String]
            var kind: IdentifierKind
        }

        /// Adds a phrase once per kind.
        private mutating func insert(
            _ keys: [String], _ kind: IdentifierKind, requiresCapital: Bool = false, _ inserted: inout Set<PhraseIdentity>
        ) {
            guard let first = keys.first else { return }
            guard inserted.insert(PhraseIdentity(keys: keys, kind: kind)).inserted else { return }
            phrases[first, default: []].append(Phrase(keys: keys, kind: kind, requiresCapital: requiresCapital))
        }

        private mutating func add(_ participant: Participant, mode: Mode, _ inserted: inout Set<PhraseIdentity>) {
            let codeKeys = TextTokenizer.keys(participant.code)
            if !codeKeys.isEmpty { insert(codeKeys, .code, &inserted) }
            guard let identity = participant.identity else { return }

            let nameTokens = TextTokenizer.tokens(Array(identity.name.unicodeScalars))
            let nameKeys = nameTokens.map(\.key)
            if !nameKeys.isEmpty {
                insert(nameKeys, .name, &inserted)
                if nameKeys.count >= 2, let first = nameKeys.first, let last = nameKeys.last {
                    insert([first, last], .name, &inserted)
                    insert([last, first], .name, &inserted)
                    insert(Array(nameKeys.dropFirst()) + [first], .name, &inserted)
                }
                for token in nameTokens {
                    switch mode {
                    case .scrubber:
                        // Every name word; two-letter ones (Li, Bo) only when capitalized. Whether
                        // a word that is also vocabulary (Hope, Field) is replaced is the
                        // scrubber's decision (see Scrubber), made on the matched text.
                        if token.letterCount >= 3 { insert([token.key], .name, &inserted) }
                        if token.letterCount == 2 { insert([token.key], .name, requiresCapital: true, &inserted) }
                    case .scanner:
                        if ClinicalVocabulary.contains(token.key) {
                            for title in IdentifierIndex.titles { insert([title, token.key], .name, &inserted) }
                            possessiveNames.insert(token.key)
                        } else if token.letterCount >= 3 {
                            insert([token.key], .name, &inserted)
                        }
                    }
                }
                if mode == .scrubber, let first = nameKeys.first {
                    let rest = Array(nameKeys.dropFirst())
                    if nameKeys.count >= 2, let last = nameKeys.last, let initial = first.first {
                        // Initials with the surname: "J. Doe", "J Doe", "J. M. Doe", "Doe, J.".
                        let initials = nameKeys.dropLast().compactMap { $0.first.map(String.init) }
                        insert([String(initial), last], .name, &inserted)
                        insert(initials + [last], .name, &inserted)
                        insert([last, String(initial)], .name, &inserted)
                        if rest.count >= 2 { insert([String(initial)] + rest, .name, &inserted) }
                    }
                    for nickname in Nicknames.diminutives(of: first) {
                        insert([nickname], .name, requiresCapital: nickname.count < 3, &inserted)
                        if !rest.isEmpty { insert([nickname] + rest, .name, &inserted) }
                        if let last = rest.last, rest.count > 1 { insert([nickname, last], .name, &inserted) }
                    }
                }
            }
            if let email = identity.email {
                let keys = TextTokenizer.keys(email)
                if !keys.isEmpty { insert(keys, .email, &inserted) }
            }
            if let phone = identity.phone {
                let digits = phone.unicodeScalars.filter { $0.value >= 48 && $0.value <= 57 }.map { Character($0) }
                if digits.count >= 10 { phones10.insert(String(digits.suffix(10))) }
                if digits.count >= 7 { phones7.insert(String(digits.suffix(7))) }
                for length in 7...10 where digits.count >= length { phoneSuffixes.insert(String(digits.suffix(length))) }
            }
            if let birthDate = identity.birthDate {
                let monthDay = birthDate.month * 100 + birthDate.day
                birthDays[monthDay, default: []].insert(birthDate.year)
                birthDaysShortYear[monthDay, default: []].insert(birthDate.year % 100)
                let year = String(birthDate.year)
                let day = String(birthDate.day)
                for month in IdentifierIndex.monthNames(birthDate.month) {
                    insert([month, day, year], .birthDate, &inserted)
                    insert([day, month, year], .birthDate, &inserted)
                    if mode == .scanner {
                        // Written with an ordinal: `March 14th, 1980`, `14th March 1980`.
                        let ordinal = day + IdentifierIndex.ordinalSuffix(birthDate.day)
                        insert([month, ordinal, year], .birthDate, &inserted)
                        insert([ordinal, month, year], .birthDate, &inserted)
                    }
                }
            }
            if let address = identity.address {
                let parts = address.split(whereSeparator: { $0 == "," || $0 == "\n" })
                if let line = parts.first {
                    let keys = TextTokenizer.keys(String(line))
                    if keys.count >= 2 { insert(keys, .address, &inserted) }
                }
                if mode == .scrubber, parts.count >= 2 {
                    // The city (second part) is a geographic subdivision smaller than a state.
                    let city = TextTokenizer.tokens(Array(String(parts[1]).unicodeScalars))
                    if !city.isEmpty, city.allSatisfy({ $0.letterCount == $0.key.count }), city.contains(where: { $0.letterCount >= 3 }) {
                        insert(city.map(\.key), .address, requiresCapital: true, &inserted)
                    }
                }
            }
            if mode == .scrubber, let zip = identity.zip {
                let keys = TextTokenizer.keys(zip)
                if let first = keys.first, first.count == 5 { insert([first], .address, &inserted) }
            }
            if let mrn = identity.mrn {
                let keys = TextTokenizer.keys(mrn)
                if !keys.isEmpty, keys.joined().count >= 4 { insert(keys, .mrn, &inserted) }
                if mode == .scanner {
                    // Without its prefix (`MRN-`, `A`): the part with digits, 5+ characters.
                    for key in keys where key.count >= 5 && key.contains(where: \.isNumber) {
                        if keys.count > 1 { insert([key], .mrn, &inserted) }
                        let digits = String(key.drop(while: \.isLetter))
                        if digits != key, digits.count >= 5 { insert([digits], .mrn, &inserted) }
                    }
                }
                if mode == .scrubber, keys.count > 1 {
                    // "MRN-55443322" also as "MRN55443322", and its number alone.
                    insert([keys.joined()], .mrn, &inserted)
                    if let number = keys.last, number.count >= 5, number.allSatisfy(\.isNumber) { insert([number], .mrn, &inserted) }
                }
            }
            for device in identity.devices {
                let tokens = TextTokenizer.tokens(Array(device.unicodeScalars))
                guard !tokens.isEmpty else { continue }
                if mode == .scanner {
                    // A model name ("Apple Watch Series 9") is not an identifier; a personal name or a
                    // serial number in it is.
                    let personal = tokens.contains { $0.isPossessive || nameKeys.contains($0.key) }
                    let serial = tokens.contains { $0.key.count >= 6 && $0.letterCount > 0 && $0.letterCount < $0.key.count }
                    guard personal || serial else { continue }
                }
                insert(tokens.map(\.key), .device, &inserted)
                if mode == .scrubber {
                    // A serial number alone ("FX4K29Q7").
                    for token in tokens where token.key.count >= 6 && token.letterCount < token.key.count { insert([token.key], .device, &inserted) }
                }
            }
        }
    }

    /// `source` compiled for allocation-free lookups (see ``KeyLookup``).
    let lookup: KeyLookup
    /// The phones and birth dates as numbers (year·1000000 + month·100 + day).
    let phoneNumbers10: NumberSet
    let phoneNumbers7: NumberSet
    /// Scanner: the phones' last 7–10 digits, as length << 40 | value (see ``phoneSuffixKey``).
    let phoneSuffixNumbers: NumberSet
    /// Scanner: vocabulary name words searched alone only as capitalized possessives.
    let possessiveNames: Set<String>
    let birthDayKeys: NumberSet
    let birthDayShortKeys: NumberSet

    init(roster: [Participant], mode: Mode) {
        self.init(Source(roster: roster, mode: mode))
    }

    init(_ source: Source) {
        lookup = KeyLookup(phrases: source.phrases)
        phoneNumbers10 = NumberSet(source.phones10.compactMap { UInt64($0) })
        phoneNumbers7 = NumberSet(source.phones7.compactMap { UInt64($0) })
        phoneSuffixNumbers = NumberSet(source.phoneSuffixes.compactMap { s in UInt64(s).map { Self.phoneSuffixKey(digits: s.count, value: $0) } })
        possessiveNames = source.possessiveNames
        birthDayKeys = NumberSet(Self.dateKeys(source.birthDays))
        birthDayShortKeys = NumberSet(Self.dateKeys(source.birthDaysShortYear))
    }

    /// The key of a phone suffix of `digits` digits (7–10) with numeric `value`.
    @inline(__always)
    static func phoneSuffixKey(digits: Int, value: UInt64) -> UInt64 { UInt64(digits) << 40 | value }

    /// year·1000000 + month·100 + day for every (month·100 + day → years) pair.
    private static func dateKeys(_ days: [Int: Set<Int>]) -> [UInt64] {
        days.flatMap { monthDay, years in years.map { dateKey(year: $0, monthDay: monthDay) } }
    }

    @inline(__always)
    static func dateKey(year: Int, monthDay: Int) -> UInt64 {
        UInt64(bitPattern: Int64(year &* 1_000_000 &+ monthDay))
    }

    /// Titles before a surname (`Mr Field`, `Dr. Hand`), as keys.
    static let titles = ["mr", "mrs", "ms", "miss", "mx", "dr", "prof"]

    /// `st`, `nd`, `rd` or `th` for a day of the month.
    static func ordinalSuffix(_ day: Int) -> String {
        if (11...13).contains(day % 100) { return "th" }
        switch day % 10 {
        case 1: return "st"
        case 2: return "nd"
        case 3: return "rd"
        default: return "th"
        }
    }

    static func monthNames(_ month: Int) -> [String] {
        let names = [
            "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
        ]
        guard (1...12).contains(month) else { return [] }
        let full = names[month - 1]
        var result = [full, String(full.prefix(3))]
        if month == 9 { result.append("sept") }
        return result
    }

    /// The identifier phrases in `tokens` (leftmost, longest first; no overlaps).
    /// `accept` may refuse a phrase match (the scrubber's context rules); the next shorter
    /// phrase at the same word is tried then.
    func matches(
        in scalars: [Unicode.Scalar], tokens: [TextToken], skip: (Int) -> Bool = { _ in false },
        accept: (Match) -> Bool = { _ in true }
    ) -> [Match] {
        var result: [Match] = []
        guard !lookup.entries.isEmpty else { return result }
        var i = 0
        while i < tokens.count {
            if skip(i) {
                i += 1
                continue
            }
            var matched = false
            if let found = lookup.entry(forKey: tokens[i].key) {
                let entry = lookup.entries[found]
                for e in Int(entry.phraseStart)..<Int(entry.phraseEnd) {
                    let phrase = lookup.phrases[Int(lookup.entryPhrases[e])]
                    if phrase.requiresCapital, !tokens[i].isCapitalized { continue }
                    let count = Int(phrase.keyCount)
                    guard i + count <= tokens.count else { continue }
                    var fits = true
                    var j = 1
                    while j < count {
                        let previous = tokens[i + j - 1]
                        let token = tokens[i + j]
                        if !lookup.key(Int(phrase.keyStart) + j, equals: token.key)
                            || !TextTokenizer.isPhraseGap(scalars, from: previous.end, to: token.start)
                        {
                            fits = false
                            break
                        }
                        j += 1
                    }
                    if fits, accept(Match(firstToken: i, lastToken: i + count - 1, kind: phrase.kind)) {
                        result.append(Match(firstToken: i, lastToken: i + count - 1, kind: phrase.kind))
                        i += count
                        matched = true
                        break
                    }
                }
            }
            if !matched { i += 1 }
        }
        return result
    }

    /// Runs of digits (with phone separators between them) that carry a roster phone number,
    /// as scalar ranges.
    func phoneRanges(in scalars: [Unicode.Scalar]) -> [Range<Int>] {
        guard !phoneNumbers10.isEmpty || !phoneNumbers7.isEmpty else { return [] }
        var result: [Range<Int>] = []
        var groups: [(start: Int, end: Int)] = []
        func flush() {
            defer { groups.removeAll(keepingCapacity: true) }
            guard !groups.isEmpty else { return }
            var g = 0
            while g < groups.count {
                // The digits from group g on: how many, and the last ten as a number.
                var digits = 0
                var last10: UInt64 = 0
                var found: Int?
                var h = g
                while h < groups.count {
                    for k in groups[h].start..<groups[h].end {
                        last10 = (last10 &* 10 &+ UInt64(scalars[k].value &- 48)) % 10_000_000_000
                        digits += 1
                    }
                    if digits > 15 { break }
                    if (digits == 7 && phoneNumbers7.contains(last10)) || (digits >= 10 && phoneNumbers10.contains(last10)) {
                        found = h
                    }
                    h += 1
                }
                if let found {
                    result.append(groups[g].start..<groups[found].end)
                    g = found + 1
                } else {
                    g += 1
                }
            }
        }
        let n = scalars.count
        var i = 0
        while i < n {
            let s = scalars[i]
            if s.value >= 48 && s.value <= 57 {
                let start = i
                while i < n, scalars[i].value >= 48, scalars[i].value <= 57 { i += 1 }
                if let last = groups.last, !Self.isPhoneGap(scalars, from: last.end, to: start) { flush() }
                // Digits glued to letters (an MRN `A1234567`, `14T08`) are not part of a phone number.
                if (start > 0 && Self.isLetter(scalars[start - 1])) || (i < n && Self.isLetter(scalars[i])) {
                    flush()
                    continue
                }
                groups.append((start, i))
            } else {
                i += 1
            }
        }
        flush()
        return result
    }

    private static func isLetter(_ s: Unicode.Scalar) -> Bool { s.properties.isAlphabetic }

    private static func isPhoneGap(_ scalars: [Unicode.Scalar], from: Int, to: Int) -> Bool {
        guard to - from >= 1, to - from <= 3 else { return to == from }
        for i in from..<to {
            switch scalars[i] {
            case " ", "-", ".", "(", ")", "+", "\u{00A0}", "/": continue
            default: return false
            }
        }
        return true
    }

    /// Numeric dates (`1980-03-14`, `03/14/1980`, `14.03.1980`, `3/14/80`) equal to a roster
    /// birth date, as scalar ranges.
    func birthDateRanges(in scalars: [Unicode.Scalar]) -> [Range<Int>] {
        guard !birthDayKeys.isEmpty else { return [] }
        var result: [Range<Int>] = []
        let n = scalars.count
        func number(at i: Int) -> (value: Int, length: Int)? {
            var j = i
            var value = 0
            while j < n, j - i < 5, scalars[j].value >= 48, scalars[j].value <= 57 {
                value = value * 10 + Int(scalars[j].value - 48)
                j += 1
            }
            return j > i ? (value, j - i) : nil
        }
        var i = 0
        while i < n {
            let isDigit = scalars[i].value >= 48 && scalars[i].value <= 57
            if !isDigit || (i > 0 && scalars[i - 1].value >= 48 && scalars[i - 1].value <= 57) {
                i += 1
                continue
            }
            guard let a = number(at: i), a.length <= 4, i + a.length < n else {
                i += 1
                continue
            }
            let sep = scalars[i + a.length]
            guard sep == "/" || sep == "-" || sep == ".", let b = number(at: i + a.length + 1), b.length <= 2 else {
                i += 1
                continue
            }
            let cStart = i + a.length + 1 + b.length
            guard cStart < n, scalars[cStart] == sep, let c = number(at: cStart + 1), c.length <= 4 else {
                i += 1
                continue
            }
            let end = cStart + 1 + c.length
            if end < n, scalars[end].value >= 48, scalars[end].value <= 57 {
                i += 1
                continue
            }
            var candidates: [(Int, Int, Int)] = []
            if a.length == 4 {
                candidates.append((a.value, b.value, c.value))
            } else if c.length == 4 || c.length == 2 {
                candidates.append((c.value, a.value, b.value))
                candidates.append((c.value, b.value, a.value))
            }
            let shortYear = c.length == 2 && a.length != 4
            let hit = candidates.contains { year, month, day in
                let monthDay = month * 100 + day
                let key = Self.dateKey(year: year, monthDay: monthDay)
                return shortYear ? birthDayShortKeys.contains(key) : birthDayKeys.contains(key)
            }
            if hit { result.append(i..<end) }
            i = end
        }
        return result
    }
}
