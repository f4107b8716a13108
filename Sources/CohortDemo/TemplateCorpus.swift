import CohortCore
import Foundation

/// A second free-text corpus, made by another method than ``AdversarialCorpus``: whole messages
/// in the styles people really send (a forwarded email with its header, a chat log with times,
/// an SMS, a voice-dictated note with digits spelled out, a sign-off under "Sent from my
/// iPhone"), each carrying identifiers where that style puts them, and clean messages in the same
/// styles. Identities are drawn from name pools with a seeded generator; the answer key is built
/// as the messages are (``ExternalCorpus`` form, scored by ``ExternalCorpusScore``).
public enum TemplateCorpus {
    static let givenNames = [
        "Ingrid", "Tomasz", "Chiamaka", "Nguyen", "Saoirse", "Rashida", "Bartholomew", "Lupita", "Oksana", "Thandiwe", "Kenji",
        "Marisol", "Eero", "Yusra", "Dagny", "Cormac", "Priyanka", "Ludmila", "Obinna", "Xiomara", "Torvald", "Annelies",
        "Hemi", "Zofia", "Wendell", "Faustina", "Grant", "Joy", "Mark", "Hope",
    ]
    static let familyNames = [
        "Featherstone", "Achterberg", "Okonkwo-Bello", "Vuong", "Ní Bhriain", "Haddad", "Przybylski", "Castellano", "Lindgren",
        "Mahlangu", "Tanizaki", "Quispe", "Halvorsen", "Ferreira-Lima", "O'Donoghue", "Bergström", "Adeyemi", "Kowalewska",
        "Marchetti", "Abernethy", "Wolfe", "Banks", "Sterling", "Rivers",
    ]
    static let streets = ["Larkspur", "Quarry Hill", "Bellweather", "Cottonwood", "Juniper", "Harrowgate", "Stonebridge", "Wexford"]
    static let suffixes = [("Road", "Rd"), ("Street", "St"), ("Avenue", "Ave"), ("Lane", "Ln"), ("Drive", "Dr"), ("Court", "Ct")]
    static let cities = ["Kalamazoo", "Tuscaloosa", "Shrewsbury", "Ballarat", "Saskatoon", "Wollongong", "Chattanooga", "Galway"]
    static let relatives = ["Amadou", "Brigid", "Casimir", "Delphine", "Evander", "Fenella", "Gideon", "Henrike", "Ignatius", "Jolene"]
    static let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
    static let digitWords = ["oh", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]

    /// Clean messages in the same styles: no identifier, every token should survive.
    static let cleanMessages = [
        "Fwd: the appointment moved to the afternoon, see you then",
        "lol knees bad again, took 2 tabs of ibuprofen 400mg at 9pm",
        "Sent from my iPhone",
        "[09:14] me: stiff this morning, better after a hot shower",
        "voice note: pain about six out of ten, slept badly, period started",
        "Re: diary - forgot to log yesterday, sorry! back pain 5/10",
        "ok so the new injection pen is way easier than the old one",
        "Walked the dog twice, 8500 steps, hips fine",
        "Can't sleep. Neck and shoulders tight. Will try the stretches",
        "thx for the reminder, logging now. fatigue 7 today",
        "Quick update: flare settling, morning stiffness down to 30 min",
        "Dictated: patient reports improved mobility, no new swelling",
        "Hope the weather warms up, the cold makes everything worse",
        "Mark the calendar: bloods due next week",
        "Grant form done, sent it back to the office",
    ]

    /// The corpus for `participants` people (seeded).
    public static func make(seed: UInt64 = 26, participants count: Int = 120) -> ExternalCorpus {
        var random = SeededRandom(seed: seed)
        func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }
        func number(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(random.next() % UInt64(range.count)) }
        var participants: [Participant] = []
        var identities: [ExternalCorpus.Identity] = []
        var plants: [ExternalCorpus.Plant] = []
        var clean: [ExternalCorpus.CleanNote] = []
        var probes: [ExternalCorpus.MedicationProbe] = []
        for i in 0..<count {
            let code = String(format: "P-%04d", i + 1)
            let given = givenNames[i % givenNames.count]
            let family = pick(familyNames)
            let area = number(201...989)
            let exchange = number(200...989)
            let line = number(1000...9999)
            let phone = "(\(area)) \(exchange)-\(line)"
            let localPart = "\(given.prefix(1))\(family)".lowercased().filter(\.isLetter)
            let email = "\(localPart)\(number(1...99))@mailbox.example.org"
            let year = number(1931...2001)
            let month = number(1...12)
            let day = number(1...28)
            let street = pick(streets)
            let suffix = pick(suffixes)
            let house = number(2...9899)
            let city = pick(cities)
            let mrn = "MRN\(number(10_000_000...99_999_999))"
            let dob = String(format: "%04d-%02d-%02d", year, month, day)
            let identity = ParticipantIdentity(
                name: "\(given) \(family)", email: email, phone: phone, birthDate: CivilDate(year: year, month: month, day: day),
                address: "\(house) \(street) \(suffix.1), \(city)", zip: String(format: "%05d", number(10_000...99_899)), mrn: mrn)
            participants.append(
                Participant(
                    id: UUID(uuid: (0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, UInt8(i / 256), UInt8(i % 256))), code: code, sex: .unknown,
                    timeZone: "America/Chicago", enrolledOn: CivilDate(year: 2026, month: 3, day: 1) ?? CivilDate(daysSinceEpoch: 20_500),
                    identity: identity))
            identities.append(ExternalCorpus.Identity(code: code, dob: dob))
            func plant(_ kind: String, _ form: String, _ text: String, _ cores: [String], _ note: String) {
                plants.append(ExternalCorpus.Plant(participant: code, kind: kind, form: form, text: text, cores: cores, note: note))
            }
            let eventMonth = pick(months)
            let eventDay = number(1...28)
            let spelled = "\(area)\(exchange)\(line)".map { digitWords[Int(String($0)) ?? 0] }.joined(separator: " ")
            let relative = pick(relatives)
            let monthName = months[month - 1]
            let mrnDigits = String(mrn.dropFirst(3))
            let pairs = stride(from: 0, to: mrnDigits.count, by: 2).map { k -> String in
                let start = mrnDigits.index(mrnDigits.startIndex, offsetBy: k)
                return String(mrnDigits[start..<mrnDigits.index(start, offsetBy: 2)])
            }.joined(separator: " ")
            let forwarded = """
                ---------- Forwarded message ---------
                From: \(given) \(family) <\(email)>
                Date: \(eventMonth) \(eventDay), 2026
                Subject: knee

                see below, pain worse
                """
            plant("name", "forwarded-from", "\(given) \(family)", [given, family], forwarded)
            plant("email", "forwarded-from", email, [email], forwarded)
            plant("event-date", "forwarded-date", "\(eventMonth) \(eventDay), 2026", ["\(eventMonth) \(eventDay), 2026"], forwarded)
            plant("name", "chat-lower", given.lowercased(), [given.lowercased()], "[\(number(10...23)):\(number(10...59))] \(given.lowercased()): knees bad again lol")
            plant("name", "signoff-initial", "\(given) \(family.prefix(1)).", [given], "Sent from my iPhone\n--\n\(given) \(family.prefix(1)).")
            plant("phone", "dictated-spelled", spelled, [spelled], "this is \(given.lowercased()) calling my number is \(spelled) thanks")
            plant("phone", "sms-dotted", "\(area).\(exchange).\(line)", ["\(area).\(exchange).\(line)"], "txt me @ \(area).\(exchange).\(line) if late")
            plant("mrn", "pairs", pairs, [pairs], "my hospital number is \(pairs) I think")
            plant("dob", "dd-Mon-yyyy", "\(day)-\(monthName.prefix(3))-\(year)", ["\(day)-\(monthName.prefix(3))-\(year)"], "date of birth \(day)-\(monthName.prefix(3))-\(year) on the form")
            plant("dob", "birthday-words", "\(monthName) \(day)", ["\(monthName) \(day)"], "it was my birthday, \(monthName) \(day), cake helped")
            plant("address", "street-no-number", "\(street) \(suffix.0)", [street], "moved to a flat on \(street) \(suffix.0) last month")
            plant("city", "city-in-chat", city, [city], "back home in \(city.lowercased()) now, weather awful")
            plant("relative", "relative-chat", relative, [relative], "my kid \(relative) has the flu so no sleep")
            plant("name", "plural-surname", "\(family)s", ["\(family)s"], "the \(family)s came over for dinner")
            let glued = (given + family).filter(\.isLetter)
            plant("name", "glued-handle", glued, [glued], "dm me on insta \(glued)")
            let member = "XQH\(number(100_000_000...999_999_999))"
            plant("id", "insurance-member", member, [member], "insurance member id \(member) on the card")
            let age = "9\(number(1...8))"
            plant("age>89", "age-is", age, [age], "my age is \(age) so go easy")
            for k in 0..<3 { clean.append(ExternalCorpus.CleanNote(participant: code, note: cleanMessages[(i * 3 + k) % cleanMessages.count])) }
            if i % 2 == 0 {
                probes.append(ExternalCorpus.MedicationProbe(participant: code, text: "ibuprofen 400 mg - \(given) picks it up", core: given))
            } else {
                probes.append(ExternalCorpus.MedicationProbe(participant: code, text: "naproxen 500 mg, pharmacy calls \(area)-\(exchange)-\(line)", core: "\(area)-\(exchange)-\(line)"))
            }
        }
        return ExternalCorpus(participants: participants, identities: identities, plants: plants, clean: clean, medicationProbes: probes)
    }
}
