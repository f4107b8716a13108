import CohortCore
import Foundation

@testable import CohortDeid

/// The independent check an adversary runs on a published value: fold case and accents, drop
/// apostrophes (and a possessive `'s`), split on anything that is not a letter or digit, and
/// look every roster identifier form up in the word list. Deliberately simple and written
/// without the scanner's tokenizer, index or matcher; the only shared piece is the allowance
/// list (`ClinicalVocabulary`), which defines which name words are searched alone.
struct AttackerScanner {
    struct Form {
        var words: [String]
        var kind: IdentifierKind
    }

    private(set) var forms: [Form] = []
    /// Vocabulary surnames, found alone as a capitalized possessive (`Field's`).
    private(set) var possessives: Set<String> = []
    /// Dictionary-word surnames, found alone also capitalized inside a sentence (`with Dubois`).
    private(set) var capitalized: Set<String> = []
    private(set) var phones: [String] = []
    private(set) var birthDates: [CivilDate] = []

    static let titles = ["mr", "mrs", "ms", "miss", "mx", "dr", "prof"]
    static let months = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"]

    init(roster: [Participant]) {
        for p in roster {
            forms.append(Form(words: Self.words(p.code), kind: .code))
            guard let id = p.identity else { continue }
            let name = Self.words(id.name)
            if let first = name.first, let last = name.last, name.count >= 2 {
                forms += [Form(words: name, kind: .name), Form(words: [first, last], kind: .name), Form(words: [last, first], kind: .name)]
            }
            for word in name {
                // A word of the vocabulary or the dictionary (Field, Berry) counts alone only after
                // a title or as a capitalized possessive, as the scrubber replaces it.
                if ClinicalVocabulary.contains(word) || SafeVocabulary.systemContains(word) {
                    for title in Self.titles { forms.append(Form(words: [title, word], kind: .name)) }
                    possessives.insert(word)
                    if !ClinicalVocabulary.contains(word), word.filter(\.isLetter).count >= 3 { capitalized.insert(word) }
                } else if word.filter(\.isLetter).count >= 3 {
                    forms.append(Form(words: [word], kind: .name))
                }
            }
            if let email = id.email { forms.append(Form(words: Self.words(email), kind: .email)) }
            if let phone = id.phone { phones.append(phone.filter(\.isASCIIDigit)) }
            if let birth = id.birthDate {
                birthDates.append(birth)
                let day = String(birth.day)
                let ordinal = day + (birth.day == 1 || birth.day == 21 || birth.day == 31 ? "st" : birth.day == 2 || birth.day == 22 ? "nd" : birth.day == 3 || birth.day == 23 ? "rd" : "th")
                let full = Self.months[birth.month - 1]
                for month in [full, String(full.prefix(3))] + (birth.month == 9 ? ["sept"] : []) {
                    for d in [day, ordinal] {
                        forms.append(Form(words: [month, d, String(birth.year)], kind: .birthDate))
                        forms.append(Form(words: [d, month, String(birth.year)], kind: .birthDate))
                    }
                }
            }
            if let street = id.address?.split(separator: ",").first, Self.words(String(street)).count >= 2 {
                forms.append(Form(words: Self.words(String(street)), kind: .address))
            }
            if let mrn = id.mrn {
                let words = Self.words(mrn)
                forms.append(Form(words: words, kind: .mrn))
                for w in words where w.count >= 5 && w.contains(where: \.isNumber) {
                    forms.append(Form(words: [w], kind: .mrn))
                    let digits = String(w.drop(while: \.isLetter))
                    if digits.count >= 5 { forms.append(Form(words: [digits], kind: .mrn)) }
                }
            }
            for device in id.devices {
                let words = Self.words(device)
                let personal = device.contains("'") || device.contains("’") || words.contains { name.contains($0) }
                let serial = words.contains { $0.count >= 6 && $0.contains(where: \.isLetter) && $0.contains(where: \.isNumber) }
                if personal || serial { forms.append(Form(words: words, kind: .device)) }
            }
        }
    }

    /// Folded words: lower case, no accents, possessive `'s` and apostrophes dropped.
    static func words(_ text: String) -> [String] {
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            .replacingOccurrences(of: #"['’ʼ‘]s\b"#, with: "", options: .regularExpression)
            .replacingOccurrences(of: #"['’ʼ‘]"#, with: "", options: .regularExpression)
        return folded.components(separatedBy: CharacterSet.alphanumerics.inverted).filter { !$0.isEmpty }
    }

    /// The kinds of identifier an attacker finds in `value`.
    func kinds(in value: String) -> Set<IdentifierKind> {
        var result: Set<IdentifierKind> = []
        let words = Self.words(value)
        for form in forms where !form.words.isEmpty && form.words.count <= words.count {
            for start in 0...(words.count - form.words.count) where Array(words[start..<(start + form.words.count)]) == form.words {
                result.insert(form.kind)
                break
            }
        }
        // `Field's`: a capitalized possessive of a vocabulary surname.
        for match in value.matches(of: /(\p{Lu}[\p{L}]+)['’]s\b\W*(\p{L}*)/) {
            let next = Self.words(String(match.2)).first ?? ""
            if Scrubber.eponymHeads.contains(next) || ClinicalVocabulary.calendar.contains(next) { continue }
            if possessives.contains(Self.words(String(match.1)).first ?? "") { result.insert(.name) }
        }
        // `visit with Dubois`: a dictionary-word surname capitalized after a word in the same sentence.
        for match in value.matches(of: /[\p{L}\p{N},'’] +(\p{Lu}[\p{L}'’]*)/) {
            let word = Self.words(String(match.1)).first ?? ""
            if capitalized.contains(word), !ClinicalVocabulary.calendar.contains(word) { result.insert(.name) }
        }
        if hasPhone(value) { result.insert(.phone) }
        if hasNumericBirthDate(value) { result.insert(.birthDate) }
        return result
    }

    /// Digit groups joined by 1–3 separators (space, `-`, `.`, `(`, `)`, `+`, `/`); a group
    /// glued to a letter is not part of a number. Any consecutive groups with 7–10 digits that
    /// end a roster phone, or 11–15 digits ending in its last 10, are that phone.
    func hasPhone(_ value: String) -> Bool {
        let chars = Array(value)
        var runs: [[String]] = [[]]
        var lastEnd: Int?
        var i = 0
        while i < chars.count {
            guard chars[i].isASCIIDigit else {
                i += 1
                continue
            }
            let start = i
            while i < chars.count, chars[i].isASCIIDigit { i += 1 }
            if let end = lastEnd {
                let gap = chars[end..<start]
                if gap.isEmpty || gap.count > 3 || !gap.allSatisfy({ " -.()+/\u{00A0}".contains($0) }) { runs.append([]) }
            }
            if (start > 0 && chars[start - 1].isLetter) || (i < chars.count && chars[i].isLetter) {
                runs.append([])
                lastEnd = nil
                continue
            }
            runs[runs.count - 1].append(String(chars[start..<i]))
            lastEnd = i
        }
        for run in runs {
            for a in run.indices {
                for b in a..<run.count {
                    let digits = run[a...b].joined()
                    guard digits.count >= 7, digits.count <= 15 else { continue }
                    for phone in phones {
                        if digits.count <= 10 ? (phone.count >= digits.count && phone.hasSuffix(digits)) : (phone.count >= 10 && digits.hasSuffix(phone.suffix(10))) {
                            return true
                        }
                    }
                }
            }
        }
        return false
    }

    static let numericDate = try! NSRegularExpression(pattern: #"(?<![0-9])([0-9]{1,4})([/.\-])([0-9]{1,2})\2([0-9]{1,4})(?![0-9])"#)

    /// `1980-03-14`, `03/14/1980`, `14.03.1980`, `3/14/80` (either day-month order).
    func hasNumericBirthDate(_ value: String) -> Bool {
        let text = value as NSString
        for match in Self.numericDate.matches(in: value, range: NSRange(location: 0, length: text.length)) {
            let a = text.substring(with: match.range(at: 1)), b = Int(text.substring(with: match.range(at: 3))) ?? 0
            let c = text.substring(with: match.range(at: 4))
            for date in birthDates {
                if a.count == 4 {
                    if Int(a) == date.year && b == date.month && Int(c) == date.day { return true }
                } else if c.count == 4 || c.count == 2 {
                    let year = Int(c) ?? -1
                    let yearOK = c.count == 4 ? year == date.year : year == date.year % 100
                    let x = Int(a) ?? -1
                    if yearOK && ((x == date.month && b == date.day) || (x == date.day && b == date.month)) { return true }
                }
            }
        }
        return false
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
