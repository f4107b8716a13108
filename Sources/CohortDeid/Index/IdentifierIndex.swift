import Foundation
import CohortCore

/// Every identifier of a roster in matchable form: word-key phrases (names, emails, addresses,
/// device names, MRNs, codes, written-out birth dates), phone digits and birth dates.
///
/// Built once from a ``Source`` (collected participant by participant into a ``PhraseTable``)
/// and kept only in compiled form (flat arrays and open-addressing tables, see ``KeyLookup`` and
/// ``NumberSet``), a few hundred bytes per participant; lookups are hash probes per word, so the
/// cost does not grow with the roster.
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

        /// Every phrase, once per (keys, kind), in the order added (see ``PhraseTable``).
        private(set) var table = PhraseTable()

        /// First word key → phrases starting with it, longest first: the plain form the tests'
        /// reference scanner matches against (built on each call; the index compiles ``table``).
        func phrasesByFirstKey() -> [String: [Phrase]] {
            var result: [String: [Phrase]] = [:]
            for p in 0..<table.count {
                let keys = table.keyIDs(of: p).map { table.keyTexts[Int($0)] }
                result[keys[0], default: []].append(Phrase(keys: keys, kind: table.kinds[p], requiresCapital: table.requiresCapital[p]))
            }
            for key in result.keys {
                result[key]?.sort { $0.keys.count > $1.keys.count }
            }
            return result
        }
        /// The trailing digits of every roster phone a digit run is matched against (a run of 7–10
        /// digits equal to one of them, or of 11–15 ending in a 10-digit one, is the phone): the
        /// last 7 and 10 digits for the scrubber (a local or a full number), the last 7, 8, 9 and
        /// 10 for the scanner (any partial number is a finding).
        private(set) var phoneSuffixes: Set<String> = []
        /// Scanner: roster name words that are vocabulary, found alone only as a capitalized
        /// possessive (`Field's`).
        private(set) var possessiveNames: Set<String> = []
        /// Scrubber: the roster's initials run together (`jd`, `jmd`), found only in capitals.
        private(set) var initials: Set<String> = []
        /// Scanner: roster name words that are dictionary words (not ``ClinicalVocabulary``),
        /// found alone also capitalized inside a sentence.
        private(set) var capitalizedNames: Set<String> = []
        /// Birth dates: month·100 + day → full years and two-digit years.
        private(set) var birthDays: [Int: Set<Int>] = [:]
        private(set) var birthDaysShortYear: [Int: Set<Int>] = [:]

        let mode: Mode

        init(roster: [Participant], mode: Mode) {
            self.init(mode: mode)
            for participant in roster { add(participant) }
            finish()
        }

        /// An empty source, filled one participant at a time with ``add(_:)`` and closed with
        /// ``finish()`` (a roster read through a cursor need never be held whole).
        init(mode: Mode) { self.mode = mode }

        /// Adds `participant`'s identifiers.
        mutating func add(_ participant: Participant) {
            var phrases = table
            table = PhraseTable()
            add(participant, mode: mode, &phrases)
            table = phrases
        }

        /// Replaces the phrases (for tests of ``PhraseTable``).
        mutating func setTableForTesting(_ table: PhraseTable) { self.table = table }

        /// Lets go of the bookkeeping that finds phrases again (no phrase is added after this).
        mutating func finish() {
            table.close()
        }

        /// First words of a unit within a building (`Apt 10D`, `Flat 1`).
        static let unitWords: Set<String> = ["apt", "apartment", "flat", "unit", "suite", "ste", "room", "floor", "fl"]

        /// Street suffixes and their other spellings (`ln` ↔ `lane`).
        static let streetSuffixes: [[String]] = [
            ["street", "st", "str"], ["avenue", "ave", "av"], ["road", "rd"], ["lane", "ln"], ["drive", "dr"], ["boulevard", "blvd"],
            ["court", "ct"], ["place", "pl"], ["way"], ["terrace", "ter", "terr"], ["circle", "cir"], ["parkway", "pkwy"],
            ["highway", "hwy"], ["square", "sq"], ["trail", "trl"], ["close"], ["crescent", "cres"], ["row"], ["alley"],
        ]

        /// The street line `keys` (`7306 chestnut ln`) also with its suffix spelled the other ways,
        /// without its suffix, and its street name with its suffix but without the number.
        private func insertStreetVariants(_ keys: [String], _ phrases: inout PhraseTable) {
            guard keys.count >= 3, let number = keys.first, number.allSatisfy(\.isNumber), let suffix = keys.last,
                let spellings = Self.streetSuffixes.first(where: { $0.contains(suffix) })
            else { return }
            let name = Array(keys.dropFirst().dropLast())
            insert([number] + name, .address, &phrases)
            for spelling in spellings {
                insert([number] + name + [spelling], .address, &phrases)
                insert(name + [spelling], .address, &phrases)
            }
        }

        /// Adds a phrase once per kind.
        private func insert(_ keys: [String], _ kind: IdentifierKind, requiresCapital: Bool = false, _ table: inout PhraseTable) {
            table.insert(keys, kind, requiresCapital: requiresCapital)
        }

        private mutating func add(_ participant: Participant, mode: Mode, _ phrases: inout PhraseTable) {
            let codeKeys = TextTokenizer.keys(participant.code)
            if !codeKeys.isEmpty { insert(codeKeys, .code, &phrases) }
            guard let identity = participant.identity else { return }
            let nameKeys = addName(identity.name, mode: mode, &phrases)
            if let email = identity.email { addEmail(email, mode: mode, &phrases) }
            if mode == .scrubber, nameKeys.count >= 2 {
                // Initials run together ("JD", "JMD"): matched written in capitals only (see Scrubber).
                let letters = nameKeys.compactMap(\.first).map(String.init)
                initials.insert(letters.joined())
                if let first = letters.first, let last = letters.last { initials.insert(first + last) }
            }
            if let phone = identity.phone {
                let digits = phone.unicodeScalars.filter { $0.value >= 48 && $0.value <= 57 }.map { Character($0) }
                let lengths = mode == .scanner ? [7, 8, 9, 10] : [7, 10]
                for length in lengths where digits.count >= length { phoneSuffixes.insert(String(digits.suffix(length))) }
            }
            if let birthDate = identity.birthDate { addBirthDate(birthDate, mode: mode, &phrases) }
            if let address = identity.address { addAddress(address, mode: mode, &phrases) }
            if mode == .scrubber, let zip = identity.zip {
                let keys = TextTokenizer.keys(zip)
                if let first = keys.first, first.count == 5 { insert([first], .address, &phrases) }
            }
            if let mrn = identity.mrn { addMRN(mrn, mode: mode, &phrases) }
            for device in identity.devices { addDevice(device, nameKeys: nameKeys, mode: mode, &phrases) }
        }

        /// The name in any order and each of its words (as the mode decides them); returns the
        /// name's keys.
        private mutating func addName(_ name: String, mode: Mode, _ phrases: inout PhraseTable) -> [String] {
            let nameTokens = TextTokenizer.tokens(name)
            let nameKeys = nameTokens.map(\.key)
            guard !nameKeys.isEmpty else { return nameKeys }
            insert(nameKeys, .name, &phrases)
            if nameKeys.count >= 2, let first = nameKeys.first, let last = nameKeys.last {
                insert([first, last], .name, &phrases)
                insert([last, first], .name, &phrases)
                insert(Array(nameKeys.dropFirst()) + [first], .name, &phrases)
            }
            for token in nameTokens { addNameWord(token, mode: mode, &phrases) }
            // Names written with an apostrophe or hyphen, as typed without it: "O Hara",
            // "D Souza", "Smith Jones", "McAllisterNg" (for the scrubber also each part of
            // 3+ letters alone, which it decides like any name word).
            for word in name.split(whereSeparator: \.isWhitespace) {
                let parts = word.split(whereSeparator: { $0 == "'" || $0 == "\u{2019}" || $0 == "-" || $0 == "\u{2013}" })
                guard parts.count > 1 else { continue }
                let keys = parts.flatMap { TextTokenizer.keys(String($0)) }
                insert(keys, .name, &phrases)
                if keys.joined().count >= 4 { insert([keys.joined()], .name, &phrases) }
                if mode == .scrubber { for key in keys where key.count >= 3 { insert([key], .name, &phrases) } }
            }
            if mode == .scrubber { addNameForms(nameKeys, &phrases) }
            return nameKeys
        }

        private mutating func addNameWord(_ token: TextToken, mode: Mode, _ phrases: inout PhraseTable) {
            switch mode {
            case .scrubber:
                // Every name word; two-letter ones (Li, Bo) only when capitalized. Whether
                // a word that is also vocabulary (Hope, Field) is replaced is the
                // scrubber's decision (see Scrubber), made on the matched text.
                if token.letterCount >= 3 { insert([token.key], .name, &phrases) }
                if token.letterCount == 2 { insert([token.key], .name, requiresCapital: true, &phrases) }
            case .scanner:
                // A word of the dictionary too (Berry, Fine, Reading) counts alone only as
                // the scrubber replaces it alone: after a title, or as a capitalized possessive.
                if ClinicalVocabulary.contains(token.key) || SafeVocabulary.systemContains(token.key) {
                    for title in IdentifierIndex.titles { insert([title, token.key], .name, &phrases) }
                    possessiveNames.insert(token.key)
                    // A dictionary word (Dubois, Berry): also capitalized inside a sentence,
                    // where the scrubber always replaces it.
                    if !ClinicalVocabulary.contains(token.key), token.letterCount >= 3 { capitalizedNames.insert(token.key) }
                } else if token.letterCount >= 3 {
                    insert([token.key], .name, &phrases)
                }
            }
        }

        /// The scrubber's other forms of a name: initials with the surname, the given name with a
        /// later initial, the family as a plural, nicknames.
        private func addNameForms(_ nameKeys: [String], _ phrases: inout PhraseTable) {
            guard let first = nameKeys.first else { return }
            let rest = Array(nameKeys.dropFirst())
            if nameKeys.count >= 2, let last = nameKeys.last, let initial = first.first {
                // Initials with the surname: "J. Doe", "J Doe", "J. M. Doe", "Doe, J.".
                let initials = nameKeys.dropLast().compactMap { $0.first.map(String.init) }
                insert([String(initial), last], .name, &phrases)
                insert(initials + [last], .name, &phrases)
                insert([last, String(initial)], .name, &phrases)
                if rest.count >= 2 { insert([String(initial)] + rest, .name, &phrases) }
            }
            for later in rest {
                // The given name with a later name's initial: "Dawn H.".
                if let initial = later.first { insert([first, String(initial)], .name, requiresCapital: true, &phrases) }
            }
            if let last = rest.last, last.count >= 3 {
                // The family as a plural: "the Featherstones", "the Joneses".
                insert([last + "s"], .name, &phrases)
                insert([last + "es"], .name, &phrases)
            }
            for nickname in Nicknames.diminutives(of: first) {
                insert([nickname], .name, requiresCapital: nickname.count < 3, &phrases)
                if !rest.isEmpty { insert([nickname] + rest, .name, &phrases) }
                if let last = rest.last, rest.count > 1 { insert([nickname, last], .name, &phrases) }
            }
        }

        private func addEmail(_ email: String, mode: Mode, _ phrases: inout PhraseTable) {
            let keys = TextTokenizer.keys(email)
            if !keys.isEmpty { insert(keys, .email, &phrases) }
            if mode == .scrubber, let at = email.firstIndex(of: "@") {
                // The local part alone ("jane.doe on gmail"), and run together ("janedoe").
                let local = TextTokenizer.keys(String(email[..<at]))
                if !local.isEmpty, local.joined().count >= 4 {
                    insert(local, .email, &phrases)
                    if local.count > 1 { insert([local.joined()], .email, &phrases) }
                }
            }
        }

        private mutating func addBirthDate(_ birthDate: CivilDate, mode: Mode, _ phrases: inout PhraseTable) {
            let monthDay = birthDate.month * 100 + birthDate.day
            birthDays[monthDay, default: []].insert(birthDate.year)
            birthDaysShortYear[monthDay, default: []].insert(birthDate.year % 100)
            let year = String(birthDate.year)
            let day = String(birthDate.day)
            for month in IdentifierIndex.monthNames(birthDate.month) {
                insert([month, day, year], .birthDate, &phrases)
                insert([day, month, year], .birthDate, &phrases)
                if mode == .scanner {
                    // Written with an ordinal: `March 14th, 1980`, `14th March 1980`.
                    let ordinal = day + IdentifierIndex.ordinalSuffix(birthDate.day)
                    insert([month, ordinal, year], .birthDate, &phrases)
                    insert([ordinal, month, year], .birthDate, &phrases)
                }
            }
        }

        private func addAddress(_ address: String, mode: Mode, _ phrases: inout PhraseTable) {
            let parts = address.split(whereSeparator: { $0 == "," || $0 == "\n" }).map(String.init)
            // "Apt 10D, 8159 Elm Blvd, Bristol": a unit before the street line.
            var street = 0
            if parts.count >= 2, let firstKey = TextTokenizer.keys(parts[0]).first, Self.unitWords.contains(firstKey) {
                let unit = TextTokenizer.keys(parts[0])
                if unit.count >= 2 { insert(unit, .address, &phrases) }
                street = 1
            }
            if street < parts.count {
                let keys = TextTokenizer.keys(parts[street])
                if keys.count >= 2 { insert(keys, .address, &phrases) }
                if mode == .scrubber { insertStreetVariants(keys, &phrases) }
            }
            if mode == .scrubber, street + 1 < parts.count {
                // The city (the part after the street) is a geographic subdivision smaller than a state.
                let city = TextTokenizer.tokens(parts[street + 1])
                if !city.isEmpty, city.allSatisfy({ $0.letterCount == $0.key.count }), city.contains(where: { $0.letterCount >= 3 }) {
                    insert(city.map(\.key), .address, &phrases)
                }
            }
        }

        private func addMRN(_ mrn: String, mode: Mode, _ phrases: inout PhraseTable) {
            let keys = TextTokenizer.keys(mrn)
            if !keys.isEmpty, keys.joined().count >= 4 { insert(keys, .mrn, &phrases) }
            if mode == .scanner {
                // Without its prefix (`MRN-`, `A`): the part with digits, 5+ characters.
                for key in keys where key.count >= 5 && key.contains(where: \.isNumber) {
                    if keys.count > 1 { insert([key], .mrn, &phrases) }
                    let digits = String(key.drop(while: \.isLetter))
                    if digits != key, digits.count >= 5 { insert([digits], .mrn, &phrases) }
                }
            }
            if mode == .scrubber, keys.count > 1 {
                // "MRN-55443322" also as "MRN55443322", and its number alone.
                insert([keys.joined()], .mrn, &phrases)
                if let number = keys.last, number.count >= 5, number.allSatisfy(\.isNumber) { insert([number], .mrn, &phrases) }
            }
        }

        private func addDevice(_ device: String, nameKeys: [String], mode: Mode, _ phrases: inout PhraseTable) {
            let tokens = TextTokenizer.tokens(device)
            guard !tokens.isEmpty else { return }
            if mode == .scanner {
                // A model name ("Apple Watch Series 9") is not an identifier; a personal name or a
                // serial number in it is.
                let personal = tokens.contains { $0.isPossessive || nameKeys.contains($0.key) }
                let serial = tokens.contains { $0.key.count >= 6 && $0.letterCount > 0 && $0.letterCount < $0.key.count }
                guard personal || serial else { return }
            }
            insert(tokens.map(\.key), .device, &phrases)
            if mode == .scrubber {
                // A serial number alone ("FX4K29Q7").
                for token in tokens where token.key.count >= 6 && token.letterCount < token.key.count { insert([token.key], .device, &phrases) }
            }
        }
    }

    /// `source` compiled for allocation-free lookups (see ``KeyLookup``).
    let lookup: KeyLookup
    /// The phones' trailing digits (``Source/phoneSuffixes``), as length << 40 | value (see
    /// ``phoneSuffixKey``).
    let phoneSuffixNumbers: NumberSet
    /// The birth dates as numbers (year·1000000 + month·100 + day), with full and two-digit years.
    /// Scanner: vocabulary name words searched alone only as capitalized possessives.
    let possessiveNames: Set<String>
    /// Scrubber: the roster's initials run together (see ``Source/initials``).
    let initials: Set<String>
    /// Scanner: see ``Source/capitalizedNames``.
    let capitalizedNames: Set<String>
    let birthDayKeys: NumberSet
    let birthDayShortKeys: NumberSet

    init(roster: [Participant], mode: Mode) {
        self.init(Source(roster: roster, mode: mode))
    }

    init(_ source: Source) {
        lookup = KeyLookup(source.table)
        phoneSuffixNumbers = NumberSet(source.phoneSuffixes.compactMap { s in UInt64(s).map { Self.phoneSuffixKey(digits: s.count, value: $0) } })
        possessiveNames = source.possessiveNames
        initials = source.initials
        capitalizedNames = source.capitalizedNames
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
}
