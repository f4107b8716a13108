public import CohortCore
import Foundation

/// A deterministic adversarial corpus for the free-text scrubber: participants with hard names
/// (accents, apostrophes, hyphens, names that are common words — Hope, Field, Bath, Hand,
/// Sample, Long, Little, Mark, May —, nicknames) and notes that plant their identifiers in every
/// form the scrubber must handle, each plant with its kind and exact text, plus clean clinical
/// notes (eponyms, drug names, months, common words) that must stay readable.
///
/// The same seed gives the same corpus. Dates are planted with the text they must become once
/// shifted by the participant's offset (``Note/shiftDays``), computed here by a renderer of
/// its own, not by the scrubber's.
public struct AdversarialCorpus: Sendable {
    /// One planted identifier.
    public struct Plant: Sendable, Codable, Hashable {
        /// What it is: `full_name`, `first_name`, `phone`, `date`… (see ``AdversarialCorpus/kinds``).
        public var kind: String
        /// Its text exactly as planted.
        public var text: String
        /// For a date: the text it must become once shifted.
        public var shifted: String?
    }

    /// One note of one participant.
    public struct Note: Sendable, Codable, Hashable {
        /// Index into ``AdversarialCorpus/participants``.
        public var participant: Int
        /// The participant's date-shift offset, in days.
        public var shiftDays: Int
        public var text: String
        /// Empty for a clean note.
        public var plants: [Plant]
        public var isClean: Bool { plants.isEmpty }

        enum CodingKeys: String, CodingKey {
            case participant, text, plants
            case shiftDays = "shift_days"
        }
    }

    /// Every plant kind, in report order.
    public static let kinds = [
        "full_name", "first_name", "surname", "middle_name", "initials", "nickname", "possessive", "lower_case", "line_break",
        "relative", "email", "obfuscated_email", "phone", "address", "postcode", "mrn", "ssn", "url", "ip", "device", "serial",
        "date", "age",
    ]

    public let participants: [Participant]
    public let notes: [Note]

    private struct Person {
        var first: String
        var middle: String?
        var last: String
        var nickname: String?
        var country: Int
        var phoneDigits: [Int]
        var email: String
        var address: String
        var mrn: String
        var serial: String
        var shift: Int
    }

    static let firstNames = [
        "José", "Zoë", "Siobhán", "Renée", "Björn", "Chloé", "Hope", "May", "Mark", "Grace", "Robert", "Elizabeth", "William",
        "Katherine", "Margaret", "Richard", "Jennifer", "Ève", "Ana-María", "Jean-Luc", "D'Arcy", "Søren", "Thomas", "Patricia",
        "Michael", "Rebecca", "Daniel", "Joseph", "Samantha", "Victoria", "Nikolai", "Aoife", "Ngozi", "Priya", "Mei", "Óscar",
        "Francesca", "Anthony", "Deborah", "Christopher", "Alexander", "Susan", "Dolores", "Ignacio", "Giuseppe", "Lily", "Rose",
        "Faith", "Joy", "Dawn", "Summer", "Will", "Frank", "Art", "Ray", "April", "June", "Iris", "Holly",
    ]
    static let middleNames = ["Anne", "Marie", "James", "Lee", "Louise", "Rose", "Ray", "Hope", "Jean", "Elena", "Kofi"]
    static let surnames = [
        "Field", "Bath", "Hand", "Sample", "Long", "Little", "O'Brien", "D’Angelo", "Smith-Jones", "García", "Müller", "Nguyễn",
        "Okafor", "MacLeod", "Hope", "Mark", "May", "Brown", "Young", "King", "Wood", "Stone", "Hill", "Bell", "Turner",
        "Walker", "Fox", "Rich", "Sharp", "Strong", "Knight", "Price", "Lamb", "Bird", "Moss", "Reed", "Cook", "Baker",
        "Kowalczyk", "Ó Súilleabháin", "Fernández", "Løvås", "Dąbrowski", "Çelik", "Åström", "Ferreira-Lopes", "Achterberg",
        "Papadopoulos", "Abernathy", "Whitfield", "Hargreaves", "Castellanos", "Rosenthal", "Delacroix", "Lindqvist",
    ]
    static let nicknames: [String: String] = [
        "Robert": "Bob", "Elizabeth": "Liz", "William": "Bill", "Katherine": "Kate", "Margaret": "Peggy", "Richard": "Rick",
        "Jennifer": "Jen", "Thomas": "Tom", "Patricia": "Trish", "Michael": "Mike", "Rebecca": "Becky", "Daniel": "Danny",
        "Joseph": "Joey", "Samantha": "Sammy", "Victoria": "Vicky", "Anthony": "Tony", "Deborah": "Debbie", "Christopher": "Chris",
        "Alexander": "Alex", "Susan": "Susie", "Dolores": "Lola", "Ignacio": "Nacho", "Giuseppe": "Beppe", "Francesca": "Frankie",
        "José": "Pepe",
    ]
    static let relatives = [
        "Emma", "Olivia", "Noah", "Liam", "Sophie", "Lucas", "Mia", "Ethan", "Hannah", "Oscar", "Amelia", "Leo", "Isla",
        "Jack", "Grace", "Lily", "Ruby", "Daisy", "Harry", "Freya", "Arjun", "Fatima", "Yusuf", "Mateo", "Chloe", "Nora",
    ]
    static let relationWords = ["daughter", "son", "husband", "wife", "sister", "brother", "mother", "friend", "neighbour", "grandson"]
    static let streets = ["Maple", "Oak", "Elm", "Church", "Mill", "Station", "Field", "Long", "Cedar", "Willow", "Park", "Hope"]
    static let suffixes = ["Street", "Avenue", "Road", "Lane", "Drive", "Court", "Close", "Way", "St", "Ave", "Rd"]
    static let domains = ["gmail.com", "example.org", "mail.example.com", "outlook.com", "web.de", "orange.fr", "yahoo.co.uk"]
    static let monthNames = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December",
    ]
    static let weekdayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

    /// Clinical sentences (eponyms, drugs, months in date-free context, words that are names).
    static let cleanSentences = [
        "Pain 6/10 in the lower back this morning, eased after a hot bath.",
        "I hope the stiffness settles; will try the stretches again tonight.",
        "Took Advil 400 mg at breakfast and Tylenol at noon.",
        "Achilles tendon sore after the long walk across the field.",
        "Crohn flare symptoms were milder than in May last year.",
        "Parkinson's disease runs in the family, so I mark tremor days in the log.",
        "Raynaud's again in the cold; fingers white for ten minutes.",
        "Slept 7 hours, woke twice, morning stiffness 45 min.",
        "Hand and wrist swelling a little better with the splint.",
        "Blood sample taken at the clinic, results next week.",
        "May need to increase the Humira dose per the nurse.",
        "Will walk to the park if the rain stops.",
        "Long day at work, fatigue 7, headache by evening.",
        "Felt fine in the morning but worse by Tuesday evening.",
        "Cold weather in January always makes the joints ache.",
        "Tried yoga, hamstring tight, no flare.",
        "Bell's palsy check was clear according to the doctor.",
        "Ginger tea and rest helped the nausea.",
        "Grace period for the diary reminder was useful.",
        "Little change since the methotrexate was started.",
        "Hope to sleep better after cutting coffee.",
        "Baker's cyst behind the knee is still there.",
        "Sjögren dryness, eyes gritty, used drops four times.",
        "Mark on the calendar: physio every Monday in March.",
        "Rose early, walked the dog, hip pain 3.",
        "Heberden nodes on two fingers are tender today.",
        "Schober test was done at the visit, flexion reduced.",
        "Sunny spring day, did some gardening with a brace on.",
        "Joy of the day: no migraine aura at all.",
        "Summer heat makes the fatigue worse than winter.",
        "Dose of prednisone tapered as planned.",
        "The bath and a heat pack eased the spasm.",
        "Sample of the new cream from the pharmacy worked well.",
        "Felt strong enough to bike for twenty minutes.",
        "Frank pain in the heel on the first steps out of bed.",
        "Still sore but better than last week.",
        "April showers made the knee ache.",
        "Will power is low today, skipped the exercises.",
        "Frank discussion with the rheumatologist about Humira.",
        "Iris inflammation checked by the eye doctor.",
        "Mark the dose in the app before bed.",
        "June was a good month for the back.",
        "Ray of sunshine this afternoon, walked to the shops.",
        "Art class helped take my mind off the pain.",
        "Faith in the new treatment is growing.",
        "Dawn walks are easier on the joints.",
        "Holly bush in the garden scratched my arm.",
        "Summer plans depend on the flares.",
        "Hope the Cosentyx works; the Achilles is still sore.",
        "Long Covid clinic appointment moved to next week.",
        "Little finger swollen, Heberden node again.",
        "Field trip with the class was tiring.",
    ]

    /// Plant-note filler (no names, no dates, no digits that look like identifiers).
    static let fillers = [
        "knee pain 5 today", "slept badly", "fatigue after work", "took ibuprofen with lunch", "walked for twenty minutes",
        "stiffness eased by noon", "headache in the evening", "no flare", "mood low", "appetite fine",
    ]

    /// A corpus of `participantCount` participants, `plantNotes` notes with 1–3 plants each and
    /// `cleanNotes` clean notes.
    public init(seed: UInt64 = 13, participantCount: Int = 220, plantNotes: Int = 5_000, cleanNotes: Int = 1_200) {
        var g = SeededRandom(seed: seed)
        var people: [Person] = []
        var participants: [Participant] = []
        for i in 0..<max(participantCount, 1) {
            let first = Self.firstNames[i % Self.firstNames.count]
            let last = Self.surnames[(i / Self.firstNames.count + i * 7) % Self.surnames.count]
            let middle: String? = g.unit() < 0.3 ? g.pick(Self.middleNames) : nil
            let country = Int(g.next() % 6)
            let phoneDigits = Self.phoneDigits(country: country, &g)
            let localPart = Self.ascii(first).lowercased() + "." + Self.ascii(last).lowercased()
            let email = localPart + String(Int(g.next() % 90) + 10) + "@" + g.pick(Self.domains)
            let address = "\(Int(g.next() % 900) + 10) \(g.pick(Self.streets)) \(g.pick(Self.suffixes))"
            let mrn = (g.unit() < 0.5 ? "A" : "") + String(10_000_000 + Int(g.next() % 89_999_999))
            let serialChars = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")
            let serial = "FX" + String((0..<6).map { _ in g.pick(serialChars) }) + String(Int(g.next() % 10))
            let shift = -Int(g.next() % 180) - 1
            let person = Person(
                first: first, middle: middle, last: last, nickname: Self.nicknames[first], country: country, phoneDigits: phoneDigits,
                email: email, address: address, mrn: mrn, serial: serial, shift: shift)
            people.append(person)
            let name = [first, middle, last].compactMap { $0 }.joined(separator: " ")
            let birth = CivilDate(year: 1940 + Int(g.next() % 60), month: 1 + Int(g.next() % 12), day: 1 + Int(g.next() % 28))
            participants.append(
                Participant(
                    id: UUID(uuid: Self.uuidBytes(&g)), code: String(format: "P-%04d", i + 1), sex: i % 2 == 0 ? .female : .male,
                    timeZone: "Europe/London", enrolledOn: CivilDate(year: 2025, month: 1, day: 6) ?? CivilDate(daysSinceEpoch: 20_094),
                    identity: ParticipantIdentity(
                        name: name, email: email, phone: Self.e164(country: country, phoneDigits), birthDate: birth, address: address,
                        zip: String(10_000 + Int(g.next() % 89_999)), mrn: mrn, devices: ["\(first)'s Apple Watch", "Fitbit Charge 6 \(serial)"])))
        }
        var notes: [Note] = []
        let kinds = Self.kinds
        for n in 0..<plantNotes {
            let p = Int(g.next() % UInt64(people.count))
            let person = people[p]
            let opening = g.pick(Self.fillers)
            var text = opening.prefix(1).uppercased() + opening.dropFirst() + ". "
            var plants: [Plant] = []
            let count = 1 + Int(g.next() % 3)
            var used: Set<String> = []
            for k in 0..<count {
                // Every kind in turn, so each is planted about as often. The first plant is the
                // author's; the others are any participant's (the scrubber removes everyone's),
                // chosen so no two plants of a note share a word and each can be judged alone.
                let kind = kinds[(n * 3 + k) % kinds.count]
                var chosen = Self.plant(kind, k == 0 ? person : people[Int(g.next() % UInt64(people.count))], shift: person.shift, &g)
                for _ in 0..<20 where !Self.words(chosen.1.text).isDisjoint(with: used) {
                    chosen = Self.plant(kind, people[Int(g.next() % UInt64(people.count))], shift: person.shift, &g)
                }
                used.formUnion(Self.words(chosen.1.text))
                text += chosen.0 + " "
                plants.append(chosen.1)
            }
            text += g.pick(Self.fillers) + "."
            notes.append(Note(participant: p, shiftDays: person.shift, text: text, plants: plants))
        }
        for _ in 0..<cleanNotes {
            let p = Int(g.next() % UInt64(people.count))
            let sentences = (0..<(1 + Int(g.next() % 3))).map { _ in g.pick(Self.cleanSentences) }
            notes.append(Note(participant: p, shiftDays: people[p].shift, text: sentences.joined(separator: " "), plants: []))
        }
        self.participants = participants
        self.notes = notes
    }

    private static func uuidBytes(_ g: inout SeededRandom) -> uuid_t {
        let a = g.next(), b = g.next()
        func byte(_ v: UInt64, _ i: Int) -> UInt8 { UInt8(truncatingIfNeeded: v >> (8 * UInt64(i))) }
        return (
            byte(a, 0), byte(a, 1), byte(a, 2), byte(a, 3), byte(a, 4), byte(a, 5), (byte(a, 6) & 0x0F) | 0x40, byte(a, 7),
            (byte(b, 0) & 0x3F) | 0x80, byte(b, 1), byte(b, 2), byte(b, 3), byte(b, 4), byte(b, 5), byte(b, 6), byte(b, 7)
        )
    }

    /// Lower-case words of `text` (for keeping the plants of a note apart).
    static func words(_ text: String) -> Set<String> {
        Set(text.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map(String.init))
    }

    /// The name without diacritics, for email addresses.
    static func ascii(_ text: String) -> String {
        String(text.folding(options: [.diacriticInsensitive], locale: nil).unicodeScalars.filter { $0.isASCII && $0.properties.isAlphabetic }.map(Character.init))
    }

    /// National significant digits: US/CA 10, UK 10, DE 10, FR 9, IN 10, AU 9.
    private static func phoneDigits(country: Int, _ g: inout SeededRandom) -> [Int] {
        func digits(_ n: Int) -> [Int] { (0..<n).map { _ in Int(g.next() % 10) } }
        switch country {
        case 0: return [6, 1, 7, 5, 5, 5] + digits(4)
        case 1: return [2, 0] + digits(8)
        case 2: return [3, 0] + digits(7)
        case 3: return [6] + digits(8)
        case 4: return [9, 8] + digits(8)
        default: return [4, 1] + digits(7)
        }
    }

    private static let countryCodes = ["1", "44", "49", "33", "91", "61"]

    private static func e164(country: Int, _ d: [Int]) -> String { "+" + countryCodes[country] + d.map(String.init).joined() }

    /// The phone in one of the country's usual written forms.
    private static func phoneText(_ person: Person, _ g: inout SeededRandom) -> String {
        let d = person.phoneDigits.map(String.init)
        func j(_ r: Range<Int>) -> String { d[r].joined() }
        let n = d.count
        let style = Int(g.next() % 3)
        switch person.country {
        case 0:
            return [
                "\(j(0..<3)).\(j(3..<6)).\(j(6..<10))", "(\(j(0..<3))) \(j(3..<6))-\(j(6..<10)) x\(100 + Int(g.next() % 900))",
                "+1 \(j(0..<3)) \(j(3..<6)) \(j(6..<10))",
            ][style]
        case 1: return ["0\(j(0..<2)) \(j(2..<6)) \(j(6..<10))", "+44 \(j(0..<2)) \(j(2..<6)) \(j(6..<10))", "0\(j(0..<3)) \(j(3..<6)) \(j(6..<10))"][style]
        case 2: return ["+49 \(j(0..<2)) \(j(2..<n))", "0\(j(0..<2))/\(j(2..<n))", "0\(j(0..<2)) \(j(2..<n)) ext. 12"][style]
        case 3:
            return [
                "0\(j(0..<1)) \(j(1..<3)) \(j(3..<5)) \(j(5..<7)) \(j(7..<9))", "+33 \(j(0..<1)) \(j(1..<3)) \(j(3..<5)) \(j(5..<7)) \(j(7..<9))",
                "0\(j(0..<1)).\(j(1..<3)).\(j(3..<5)).\(j(5..<7)).\(j(7..<9))",
            ][style]
        case 4: return ["+91 \(j(0..<5)) \(j(5..<10))", "0\(j(0..<5)) \(j(5..<10))", "+91-\(j(0..<5))-\(j(5..<10))"][style]
        default: return ["(0\(j(0..<1))) \(j(1..<5)) \(j(5..<9))", "0\(j(0..<3)) \(j(3..<6)) \(j(6..<9))", "+61 \(j(0..<1)) \(j(1..<5)) \(j(5..<9))"][style]
        }
    }

    /// A date written in one of the formats notes use, and the same date shifted, written the
    /// same way (the weekday recomputed).
    private static func dateText(_ shift: Int, _ g: inout SeededRandom) -> (String, String) {
        let year = 2025 + Int(g.next() % 2)
        let day = CivilDate(year: year, month: 1 + Int(g.next() % 12), day: 1 + Int(g.next() % 28)) ?? CivilDate(daysSinceEpoch: 20_200)
        let moved = CivilDate(daysSinceEpoch: day.daysSinceEpoch + shift)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        func suffix(_ v: Int) -> String { (11...13).contains(v) ? "th" : [1: "st", 2: "nd", 3: "rd"][v % 10] ?? "th" }
        func weekday(_ d: CivilDate) -> String {
            // 1970-01-01 was a Thursday (index 3 from Monday).
            weekdayNames[((d.daysSinceEpoch % 7 + 7) % 7 + 3) % 7]
        }
        let formats: [(CivilDate) -> String] = [
            { "\($0.year)-\(two($0.month))-\(two($0.day))" },
            { "\(two($0.month))/\(two($0.day))/\($0.year)" },
            { "\(two($0.day)).\(two($0.month)).\($0.year)" },
            { "\($0.day) \(monthNames[$0.month - 1]) \($0.year)" },
            { "\(monthNames[$0.month - 1]) \($0.day)\(suffix($0.day)), \($0.year)" },
            { "\(weekday($0)), \(monthNames[$0.month - 1]) \($0.day), \($0.year)" },
            { "\(two($0.day)).\(two($0.month))." },
            { "\($0.day) \(monthNames[$0.month - 1])" },
        ]
        let format = formats[Int(g.next() % UInt64(formats.count))]
        return (format(day), format(moved))
    }

    /// A sentence planting `kind` of `p`'s identifiers; dates are the note author's, shifted by `shift`.
    private static func plant(_ kind: String, _ p: Person, shift: Int, _ g: inout SeededRandom) -> (String, Plant) {
        let full = [p.first, p.middle, p.last].compactMap { $0 }.joined(separator: " ")
        func make(_ template: String, _ value: String, shifted: String? = nil) -> (String, Plant) {
            (template.replacingOccurrences(of: "{}", with: value), Plant(kind: kind, text: value, shifted: shifted))
        }
        switch kind {
        case "full_name": return make(g.pick(["{} called about the diary.", "Note from {}: knee worse.", "Spoke with {} today."]), full)
        case "first_name":
            // "{} is worried…" carries no evidence of a person: a first name that is also a word
            // (Hope, May, Mark) is expected to stay there, and is counted as a leak.
            return make(
                g.pick(["{} said the pain was better.", "Talked with {} about sleep.", "{} texted that the flare eased.", "{} is worried about the flare."]),
                p.first)
        case "surname": return make(g.pick(["Mr. {} came in for the visit.", "Spoke to Ms. {} about meds.", "Dr. {} reviewed the log."]), p.last)
        case "middle_name":
            return make("Signed {}.", [p.first, p.middle ?? p.first.prefix(1) + ".", p.last].joined(separator: " "))
        case "initials": return make(g.pick(["{} reports stiffness.", "Seen by {} again."]), "\(p.first.prefix(1)). \(p.last)")
        case "nickname":
            let nick = p.nickname ?? p.first
            return make(g.pick(["{} drove me to the clinic.", "Went out with {} for a walk.", "{} said hi."]), nick)
        case "possessive": return make(g.pick(["{}'s knee is worse today.", "Picked up {}'s prescription."]), p.first)
        case "lower_case": return make(g.pick(["{} called again.", "message from {} about the app."]), full.lowercased())
        case "line_break": return make("Entry by\n{} about fatigue.", "\(p.first)\n\(p.last)")
        case "relative":
            return make("My \(g.pick(Self.relationWords)) {} visited.", g.pick(Self.relatives))
        case "email": return make(g.pick(["Email me at {} please.", "Reach {}."]), p.email)
        case "obfuscated_email":
            let parts = p.email.split(separator: "@")
            let local = String(parts.first ?? ""), domain = String(parts.last ?? "")
            let text: String
            switch g.next() % 3 {
            case 0: text = local.replacingOccurrences(of: ".", with: " dot ") + " at " + domain.replacingOccurrences(of: ".", with: " dot ")
            case 1: text = local + "[at]" + domain.replacingOccurrences(of: ".", with: "[dot]")
            default: text = local + " (at) " + domain
            }
            return make("Write to {} for the results.", text)
        case "phone": return make(g.pick(["Call {} after six.", "New number {}.", "Phone: {}"]), phoneText(p, &g))
        case "address": return make(g.pick(["Moved to {} last month.", "Lives at {}, Apt 4B."]), p.address)
        case "postcode":
            let code = ["Springfield, IL 62704", "SW1A 1AA", "10115 Berlin", "75001 Paris", "M1 1AE", "Boston, MA 02115"][Int(g.next() % 6)]
            return make("Address ends {}.", code)
        case "mrn": return make(g.pick(["MRN {} at the clinic.", "Chart {} updated.", "Record {} checked."]), p.mrn)
        case "ssn":
            let a = 100 + Int(g.next() % 800), b = 10 + Int(g.next() % 89), c = 1000 + Int(g.next() % 8999)
            return make(g.pick(["SSN {} on file.", "Social security {}."]), g.unit() < 0.5 ? "\(a)-\(b)-\(c)" : "\(a) \(b) \(c)")
        case "url":
            let handle = ascii(p.first).lowercased() + ascii(p.last).lowercased()
            return make("My blog is {} now.", g.pick(["https://\(handle).example.org/diary", "www.\(handle).com", "\(handle).com/flare-log"]))
        case "ip": return make("Logged in from {}.", "\(10 + g.next() % 200).\(g.next() % 250).\(g.next() % 250).\(1 + g.next() % 250)")
        case "device": return make("{} stopped syncing.", "\(p.first)'s Apple Watch")
        case "serial": return make("Serial number {} replaced.", p.serial)
        case "date":
            let (text, shifted) = dateText(shift, &g)
            return make(g.pick(["Flare started on {}.", "Seen on {} at the clinic.", "Since {} worse."]), text, shifted: shifted)
        default:
            let age = 90 + Int(g.next() % 15)
            return make(g.pick(["My grandmother, aged {}, helps.", "Lives with a {}-year-old uncle.", "Aunt is {} yo."]), "\(age)")
        }
    }
}
