import CohortCore
import Foundation

/// A third free-text corpus, made by a third method: not messages written around identifiers
/// (``TemplateCorpus``) nor plants drawn from a list of renderings (``AdversarialCorpus``), but
/// identifier **forms** composed by transforming each participant's roster values — glue, case
/// change, one-letter edits, spelling letter by letter, plurals, handles built from name parts,
/// transliteration of the non-Latin names the roster holds, phone digits as words and keypad
/// letters, dates as ordinals, holidays, compact ISO and words, ages over 89 in words — and
/// identifiers the roster does not hold at all: insurance member ids, Medicare MBIs, Epic-like
/// ids, passport and licence numbers, VINs, plates, MAC addresses, names of people who are not
/// participants. Each form is one line of a short carrier sentence, so a leak is the form's.
///
/// Written as an adversary would, from the list of forms in issue 26, before the scrubber was
/// changed for it; the answer key is in ``ExternalCorpus`` form (scored by
/// ``ExternalCorpusScore``), and ``HeldOutForms/measure(_:scrubber:scanner:)`` counts what an
/// export would publish: a form that survives the scrubber and that the residual scan does not
/// flag either.
public enum HeldOutForms {
    /// Roster names: Latin ones, and names the roster holds in Cyrillic or Greek (notes write
    /// them in Latin letters, see ``transliterate(_:)``).
    static let latinNames: [(String, String)] = [
        ("Ottilie", "Wojciechowska"), ("Fergal", "MacAonghusa"), ("Ngozi", "Eze-Obiora"), ("Henrikke", "Sørumgaard"),
        ("Lavinia", "Thistlewood"), ("Ambrose", "Quartermaine"), ("Dervla", "Kilbride"), ("Ignatius", "Papadakis"),
        ("Zuzana", "Hrabovská"), ("Radomir", "Petrović"), ("Keziah", "Ashworth"), ("Bertrand", "Fairweather"),
        ("Marguerite", "Delacroix"), ("Osvaldo", "Villanueva"), ("Tamsin", "Penhaligon"), ("Caspian", "Wetherell"),
        // Names that are also dictionary words.
        ("Hazel", "Marsh"), ("Forrest", "Banks"),
    ]
    static let nonLatinNames: [String] = [
        "Светлана Кузнецова", "Дмитрий Соколов", "Анастасия Волкова", "Ярослав Морозов", "Δημήτρης Παπαδόπουλος",
        "Ελευθερία Κωνσταντίνου", "Σταύρος Αντωνίου", "Ксения Лебедева",
    ]
    static let streets = ["Marlowe", "Ridgecrest", "Windermere", "Ashbury", "Kittredge", "Thornbury", "Pemberton", "Larchmont"]
    static let cities = ["Poughkeepsie", "Wagga Wagga", "Kirkcaldy", "Schenectady", "Nanaimo", "Oshkosh", "Timaru", "Ypsilanti"]
    /// People the notes mention who are not participants, none a dictionary word.
    static let otherSurnames = ["Achebe", "Nwachukwu", "Szymański", "Oyelaran", "Vasquez-Ortiz", "Gunnarsdóttir", "Ekwueme", "Tshabalala"]
    static let otherGiven = ["Siobhan", "Thaddeus", "Ifeoma", "Jarosław", "Maebh", "Ptolemy", "Anouk", "Zebulon"]
    /// Surnames of people who are not participants that are also dictionary words.
    static let otherDictionarySurnames = ["Baker", "Fisher", "Hill", "Wood", "Gardner", "Shepherd", "Mason", "Holland"]
    static let relationWords = ["my brother-in-law", "my aunt", "my neighbour", "my carer", "my stepdad", "my cousin"]
    static let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
    static let digitWords = ["oh", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    static let ordinalWords = [
        "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh", "twelfth", "thirteenth",
        "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth", "twentieth", "twenty-first", "twenty-second",
        "twenty-third", "twenty-fourth", "twenty-fifth", "twenty-sixth", "twenty-seventh", "twenty-eighth",
    ]
    static let tens = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
    static let ones = ["", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    static let keypad: [Character: String] = ["2": "ABC", "3": "DEF", "4": "GHI", "5": "JKL", "6": "MNO", "7": "PQRS", "8": "TUV", "9": "WXYZ"]
    static let holidays = ["Christmas", "Thanksgiving", "Easter", "Halloween", "Hanukkah", "Diwali"]

    /// Clean lines in the same carrier styles: numbers, codes and capitals that are not identifiers.
    static let cleanLines = [
        "took 2 x 500mg naproxen at 8:30 with food",
        "BP 128/82 this morning, pulse 71",
        "second dose of the injection on the 2nd week went fine",
        "vitamin B12 1000 mcg and D3 daily",
        "pain 7/10 in the lower back, walked 3.5 km anyway",
        "Grade 2 fatigue, slept 9 hours",
        "the physio said to do 3 sets of 10 reps",
        "Hope the new dose helps, will Mark it in the diary",
        "ran out of ibuprofen, need a refill before Friday",
        "stiffness for about 45 minutes after waking",
        "Type 2 diabetes check was normal",
        "felt dizzy at 6pm, better by 7",
    ]

    /// The corpus for `count` participants (seeded): every form once per participant.
    public static func make(seed: UInt64 = 2_026, participants count: Int = 96) -> ExternalCorpus {
        var random = SeededRandom(seed: seed)
        func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }
        func number(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(random.next() % UInt64(range.count)) }
        func digits(_ n: Int) -> String { String((0..<n).map { _ in Character(String(number(0...9))) }) }
        func letters(_ n: Int, from alphabet: String = "ABCDEFGHJKLMNPRSTUVWXYZ") -> String {
            let all = Array(alphabet)
            return String((0..<n).map { _ in all[number(0...(all.count - 1))] })
        }
        var participants: [Participant] = []
        var identities: [ExternalCorpus.Identity] = []
        var plants: [ExternalCorpus.Plant] = []
        var clean: [ExternalCorpus.CleanNote] = []
        var probes: [ExternalCorpus.MedicationProbe] = []
        for i in 0..<count {
            let code = String(format: "HF-%03d", i + 1)
            // One participant in four has a name the roster holds in Cyrillic or Greek.
            let rosterName: String
            let given: String
            let family: String
            if i % 4 == 3 {
                rosterName = nonLatinNames[(i / 4) % nonLatinNames.count]
                let parts = transliterate(rosterName).split(separator: " ").map(String.init)
                given = parts[0]
                family = parts[parts.count - 1]
            } else {
                (given, family) = latinNames[(i * 5 + i / latinNames.count) % latinNames.count]
                rosterName = "\(given) \(family)"
            }
            let area = number(201...989)
            let exchange = number(200...989)
            let line = number(1000...9999)
            let year = number(1930...2003)
            let month = number(1...12)
            let day = number(1...28)
            let street = pick(streets)
            let house = number(3...9899)
            let city = pick(cities)
            let zip = String(format: "%05d", number(10_000...99_899))
            let plainGiven = fold(given)
            let plainFamily = fold(family)
            let email = "\(plainGiven).\(plainFamily)\(number(1...99))@posteo.example"
            let identity = ParticipantIdentity(
                name: rosterName, email: email, phone: "+1 \(area)-\(exchange)-\(line)",
                birthDate: CivilDate(year: year, month: month, day: day), address: "\(house) \(street) Avenue, \(city)", zip: zip,
                mrn: "M\(digits(8))")
            participants.append(
                Participant(
                    id: UUID(uuid: (0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0x26, UInt8(i / 256), UInt8(i % 256))), code: code, sex: .unknown,
                    timeZone: "America/New_York", enrolledOn: CivilDate(year: 2026, month: 2, day: 1) ?? CivilDate(daysSinceEpoch: 20_500),
                    identity: identity))
            identities.append(ExternalCorpus.Identity(code: code, dob: String(format: "%04d-%02d-%02d", year, month, day)))
            func plant(_ kind: String, _ form: String, _ text: String, _ cores: [String], _ note: String) {
                plants.append(ExternalCorpus.Plant(participant: code, kind: kind, form: form, text: text, cores: cores, note: note))
            }
            func one(_ kind: String, _ form: String, _ text: String, _ carrier: String) {
                plant(kind, form, text, [text], carrier.replacingOccurrences(of: "{}", with: text))
            }

            // Names by transformation of the roster name.
            one("name", "glued-camel", given + family.filter(\.isLetter), "dm me, I'm {} on there")
            one("name", "glued-word", family.filter(\.isLetter) + pick(["Tech", "Fitness", "Family", "Home"]), "the wifi here is called {}")
            one("name", "glued-lower", (plainGiven + plainFamily).filter(\.isLetter), "login {} works again")
            plant("name", "all-capitals", "\(given.uppercased()) \(family.uppercased())", [given.uppercased(), family.uppercased()],
                "SIGNED: \(given.uppercased()) \(family.uppercased())")
            plant("name", "lower-case", "\(plainGiven) \(plainFamily)", [plainGiven, plainFamily], "its \(plainGiven) \(plainFamily) again, same as last week")
            one("name", "edit-substitute", edit(family, &random, .substitute), "appointment letter says {} which is wrong")
            one("name", "edit-delete", edit(family, &random, .delete), "pharmacy has me down as {} again")
            one("name", "edit-insert", edit(given, &random, .insert), "the nurse called me {} lol")
            one("name", "edit-transpose", edit(family, &random, .transpose), "form was filled in as {} by reception")
            one("name", "spelled-dashes", family.uppercased().filter(\.isLetter).map(String.init).joined(separator: "-"), "surname is {} for the lab")
            one("name", "spelled-spaces", plainGiven.filter(\.isLetter).map(String.init).joined(separator: " "), "my name spelled out: {}")
            one("name", "plural", family + "es", "dinner with the {} tonight")
            one("name", "possessive-plural", family + "s'", "at the {} house all weekend")
            one("name", "handle-initial-family", "\(plainGiven.prefix(1))\(plainFamily)".filter(\.isLetter), "follow {} for updates")
            one("name", "handle-given-initial", "\(plainGiven)_\(plainFamily.prefix(1))", "my gamertag is {}")
            one("name", "handle-bsky", "\(plainGiven)\(plainFamily.prefix(3)).bsky.social".filter { $0.isLetter || $0 == "." }, "posting as {}")
            one("name", "handle-year", "\(plainFamily)\(year % 100)".filter { $0.isLetter || $0.isNumber }, "user {} on the forum")
            one("name", "family-comma-given", "\(family), \(given)", "label on the box: {}")
            if i % 4 == 3 {
                let other = transliterate(rosterName, variant: true)
                one("name", "transliteration-variant", other, "the letter is addressed to {}")
            }
            one("name", "other-person-undictionary", pick(otherGiven), "went to the cinema with {} yesterday")
            one("relative", "surname-before-relation", pick(otherSurnames), "{}, \(pick(relationWords)), drove me in")
            one("relative", "dictionary-surname-after-title", pick(otherDictionarySurnames), "Mrs {} next door fed the cat")
            one("relative", "dictionary-surname-before-relation", pick(otherDictionarySurnames), "{}, \(pick(relationWords)), drove me in")

            // Phones by transformation of the roster phone.
            let phoneDigits = "\(area)\(exchange)\(line)"
            one("phone", "oh-words", "\(spell(String(area))), \(spell(String(exchange))), \(spell(String(line)))", "call me back on {} after six")
            one("phone", "vanity", "\(area)-\(exchange)-\(vanity(String(line), &random))", "the clinic line is {} apparently")
            one("phone", "grouped-pairs", stride(from: 0, to: 10, by: 2).map { k -> String in
                let start = phoneDigits.index(phoneDigits.startIndex, offsetBy: k)
                return String(phoneDigits[start..<phoneDigits.index(start, offsetBy: 2)])
            }.joined(separator: " "), "ring {} if no answer")
            one("phone", "country-dots", "+1.\(area).\(exchange).\(line)", "whatsapp {}")

            // Dates by transformation of the birth date and of event dates.
            let monthName = months[month - 1]
            let eventMonth = number(1...12)
            let eventDay = number(1...28)
            let ordinal = "\(eventDay)\(suffix(eventDay))"
            one("event-date", "ordinal-alone", "the \(ordinal)", "flare started on {} and lasted a week")
            one("event-date", "holiday-year", "\(pick(holidays)) \(number(2019...2026))", "worst it has been since {}")
            one("event-date", "compact-iso", String(format: "2026%02d%02dT%02d%02d", eventMonth, eventDay, number(0...23), number(0...59)), "sensor log {} shows the spike")
            one("event-date", "words", "the \(ordinalWords[eventDay - 1]) of \(months[eventMonth - 1])", "infusion booked for {}")
            one("event-date", "month-ordinal-word", "\(months[eventMonth - 1]) the \(ordinalWords[eventDay - 1])", "results came back {}")
            one("dob", "birthday-words", "the \(ordinalWords[day - 1]) of \(monthName)", "my birthday, {}, was quiet")
            one("dob", "year-in-words", "\(monthName) \(day), \(yearWords(year))", "born {}")
            one("dob", "compact-dmy", String(format: "%02d%02d%04d", day, month, year), "dob {} on the wristband")
            one("dob", "dotted-short", String(format: "%02d.%02d.%02d", day, month, year % 100), "geb. {}")

            // Ages over 89 in words.
            let age = number(90...104)
            one("age>89", "words-hyphen", ageWords(age, hyphen: true), "I'm {} and still walking daily")
            one("age>89", "words-years-old", "\(ageWords(age, hyphen: false)) years old", "mum is {} now")
            one("age>89", "digits-yo", "\(age)yo", "\(age)yo female, stiff hips")

            // Identifiers the roster does not hold.
            one("id", "insurance-member", "\(letters(3))\(digits(9))", "member ID {} on the insurance card")
            one("id", "insurance-group", "\(digits(3))-\(digits(5))-\(digits(2))", "group number {}")
            // Medicare MBI: C A AN N - A AN N - A A N N.
            let alphanumeric = "ACDEFGHJKMNPQRTUVWXY0123456789"
            let mbi = "\(number(1...9))\(letters(1))\(letters(1, from: alphanumeric))\(number(0...9))-"
                + "\(letters(1))\(letters(1, from: alphanumeric))\(number(0...9))-\(letters(2))\(digits(2))"
            one("id", "medicare-mbi", mbi, "Medicare number {}")
            one("id", "medicare-mbi-plain", mbi.filter { $0 != "-" }, "medicare {}")
            one("id", "epic-mrn", "E\(digits(7))", "MyChart says MRN {}")
            one("id", "epic-csn", digits(10), "CSN {} for the visit")
            one("id", "passport", "\(letters(1))\(digits(8))", "passport {} expires soon")
            one("id", "licence-us", "\(letters(1))\(digits(3)) \(digits(4)) \(digits(3))", "driver's license {}")
            // UK driving licence: the surname's first five letters, the birth date, initials, a check digit.
            let ukLicence = String((plainFamily.uppercased().filter(\.isLetter) + "99999").prefix(5))
                + String(format: "%02d%02d%02d", year % 100, month, day) + letters(2) + "9" + letters(2)
            one("id", "licence-uk", ukLicence, "licence {}")
            let vinCharacters = "ABCDEFGHJKLMNPRSTUVWXYZ0123456789"
            one("id", "vin", letters(3, from: vinCharacters) + digits(2) + letters(12, from: vinCharacters), "car VIN {} for the parking permit")
            one("id", "plate-us", "\(number(1...9))\(letters(3))\(digits(3))", "parked in bay 4, plate {}")
            one("id", "plate-uk", "\(letters(2))\(digits(2)) \(letters(3))", "reg {} in the car park")
            let mac = (0..<6).map { _ in String(format: "%02X", number(0...255)) }
            one("id", "mac-colons", mac.joined(separator: ":"), "watch MAC {} paired again")
            one("id", "mac-dashes-lower", mac.joined(separator: "-").lowercased(), "bluetooth id {}")
            one("id", "serial", "\(letters(1))\(digits(2))\(letters(2))\(digits(1))\(letters(3))\(digits(3))", "serial no {} on the back")

            // Address and city by transformation of the roster address.
            one("address", "street-no-number", "\(street) Avenue", "moved to a flat on {} last month")
            one("address", "street-bare", street, "just off {} near the shops")
            one("address", "number-in-words", "\(spell(String(house))) \(street.lowercased()) ave", "deliveries to {} please")
            one("address", "po-box", "PO Box \(number(100...9999))", "post it to {}")
            one("city", "city-capitals", city.uppercased(), "BACK IN {} FOR THE WEEKEND")
            one("city", "city-lower", city.lowercased(), "train to {} was late")
            one("zip", "zip-plus-four", "\(zip)-\(digits(4))", "postcode {}")

            for k in 0..<2 { clean.append(ExternalCorpus.CleanNote(participant: code, note: cleanLines[(i * 2 + k) % cleanLines.count])) }
            let glued = (given + family).filter(\.isLetter)
            probes.append(ExternalCorpus.MedicationProbe(participant: code, text: "celecoxib 200 mg, from \(glued)", core: glued))
        }
        return ExternalCorpus(participants: participants, identities: identities, plants: plants, clean: clean, medicationProbes: probes)
    }

    /// `text` with accents removed and lower-cased.
    static func fold(_ text: String) -> String {
        transliterate(text).folding(options: [.caseInsensitive, .diacriticInsensitive], locale: Locale(identifier: "en_US_POSIX"))
            .replacingOccurrences(of: "ø", with: "o")
    }

    enum Edit { case substitute, delete, insert, transpose }

    /// `name` with one edit at a letter past the first (a name of 5+ letters; shorter ones are left as they are).
    static func edit(_ name: String, _ random: inout SeededRandom, _ kind: Edit) -> String {
        var letters = Array(name)
        guard letters.count >= 5 else { return name }
        let at = 1 + Int(random.next() % UInt64(letters.count - 2))
        let vowels: [Character] = ["a", "e", "i", "o", "u", "y"]
        switch kind {
        case .substitute:
            let old = Character(letters[at].lowercased())
            letters[at] = vowels.contains(old) ? (old == "e" ? "a" : "e") : (old == "n" ? "m" : "n")
        case .delete: letters.remove(at: at)
        case .insert: letters.insert(letters[at], at: at)
        case .transpose: letters.swapAt(at, at + 1 < letters.count ? at + 1 : at - 1)
        }
        return String(letters)
    }

    /// Digits as words, zero as "oh".
    static func spell(_ digits: String) -> String {
        digits.compactMap { Int(String($0)) }.map { digitWords[$0] }.joined(separator: " ")
    }

    /// Phone digits as keypad letters where a digit has letters (`0` and `1` stay digits).
    static func vanity(_ digits: String, _ random: inout SeededRandom) -> String {
        String(
            digits.map { d -> Character in
                guard let letters = keypad[d] else { return d }
                let all = Array(letters)
                return all[Int(random.next() % UInt64(all.count))]
            })
    }

    static func suffix(_ day: Int) -> String {
        if (11...13).contains(day) { return "th" }
        switch day % 10 {
        case 1: return "st"
        case 2: return "nd"
        case 3: return "rd"
        default: return "th"
        }
    }

    /// `1976` → "nineteen seventy-six"; `2003` → "two thousand three".
    static func yearWords(_ year: Int) -> String {
        if year >= 2000 { return "two thousand" + (year % 100 == 0 ? "" : " \(twoDigits(year % 100, hyphen: true))") }
        return "nineteen " + (year % 100 < 10 ? "oh \(ones[year % 10])" : twoDigits(year % 100, hyphen: true))
    }

    static func twoDigits(_ n: Int, hyphen: Bool) -> String {
        let teens = ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
        if n < 10 { return ones[n] }
        if n < 20 { return teens[n - 10] }
        return n % 10 == 0 ? tens[n / 10] : tens[n / 10] + (hyphen ? "-" : " ") + ones[n % 10]
    }

    /// An age in words: `93` → "ninety-three", `101` → "a hundred and one".
    static func ageWords(_ age: Int, hyphen: Bool) -> String {
        age < 100 ? twoDigits(age, hyphen: hyphen) : "a hundred" + (age == 100 ? "" : " and \(twoDigits(age - 100, hyphen: hyphen))")
    }

    static let cyrillic: [Character: String] = [
        "а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "е": "e", "ё": "yo", "ж": "zh", "з": "z", "и": "i", "й": "y", "к": "k",
        "л": "l", "м": "m", "н": "n", "о": "o", "п": "p", "р": "r", "с": "s", "т": "t", "у": "u", "ф": "f", "х": "kh", "ц": "ts",
        "ч": "ch", "ш": "sh", "щ": "shch", "ъ": "", "ы": "y", "ь": "", "э": "e", "ю": "yu", "я": "ya",
    ]
    static let greek: [Character: String] = [
        "α": "a", "ά": "a", "β": "v", "γ": "g", "δ": "d", "ε": "e", "έ": "e", "ζ": "z", "η": "i", "ή": "i", "θ": "th", "ι": "i",
        "ί": "i", "κ": "k", "λ": "l", "μ": "m", "ν": "n", "ξ": "x", "ο": "o", "ό": "o", "π": "p", "ρ": "r", "σ": "s", "ς": "s",
        "τ": "t", "υ": "y", "ύ": "y", "φ": "f", "χ": "ch", "ψ": "ps", "ω": "o", "ώ": "o",
    ]

    /// A Latin transliteration of a Cyrillic or Greek name (`variant`: another common spelling:
    /// `kh`→`h`, `y`→`i`, `ts`→`tz`, Greek `v`→`b`, `i`→`ee`-free `e`…).
    static func transliterate(_ text: String, variant: Bool = false) -> String {
        var result = ""
        for c in text {
            let lower = Character(c.lowercased())
            guard let latin = cyrillic[lower] ?? greek[lower] else {
                result.append(c)
                continue
            }
            var piece = latin
            if variant {
                switch latin {
                case "kh": piece = "h"
                case "y": piece = "i"
                case "ts": piece = "tz"
                case "v" where greek[lower] != nil: piece = "b"
                case "ch" where greek[lower] != nil: piece = "h"
                default: break
                }
            }
            result += c.isUppercase ? piece.prefix(1).uppercased() + piece.dropFirst() : piece
        }
        return result
    }
}
