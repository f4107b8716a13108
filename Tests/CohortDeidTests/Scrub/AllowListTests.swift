import CohortCore
import Foundation
import Testing

@testable import CohortDeid

/// The allow-list pass: a word survives only when it is known to be safe; everything else
/// becomes a typed token or `[REDACTED]`, whatever form nobody thought of it takes.
struct AllowListTests {
    static let scrubber: Scrubber? = try? Scrubber(roster: [])

    @Test(arguments: [
        // Words no dictionary has: glued names, handles, strangers' surnames, transliterations.
        ("IngridFeatherstone came by", "[NAME] came by"),
        ("Note from @jfeatherstone today", "Note from @[REDACTED] today"),
        ("Achebe, my brother-in-law, drove", "[REDACTED], my brother-in-law, drove"),
        ("write to jane.doe on gmail", "write to [REDACTED].[REDACTED] on [REDACTED]"),
        // Dictionary words that are names, decided by evidence.
        ("My brother Will called", "My brother [NAME] called"),
        ("Will see the doctor tomorrow", "Will see the doctor tomorrow"),
        ("I hope it helps", "I hope it helps"),
        ("Thanks,\nHope", "Thanks,\n[NAME]"),
        // Numbers: 7+ digits in any grouping, spelled, with O for zero.
        ("call five five five one two one two", "call [PHONE]"),
        ("member id 12 34 567 on the card", "member id [ID] on the card"),
        ("new number 9O7-29O-O8O7", "new number [PHONE]"),
        ("badge 483920 at the desk", "badge [ID] at the desk"),
        // Numbers in safe roles stay.
        ("took 500mg naproxen at 8am", "took 500mg naproxen at 8am"),
        ("pain 7/10, BP 120/80, 10000 steps", "pain 7/10, BP 120/80, 10000 steps"),
        ("vitamin D and B12 daily", "vitamin D and B12 daily"),
        // Dates nobody wrote a pattern for; ages over 89 in words.
        ("Christmas 2025 was hard", "[DATE] was hard"),
        ("on the 7th I felt worse", "on the [DATE] I felt worse"),
        ("the 2nd dose went fine", "the 2nd dose went fine"),
        ("my birthday, the eighth of February", "my birthday, the [DATE]"),
        ("started 20260314T0800 exactly", "started [DATE] exactly"),
        ("DOB 04SEP1976 on the form", "DOB [DATE] on the form"),
        ("I'm ninety-three and still walking", "I'm 90 or older and still walking"),
        ("I'm 93 and still walking", "I'm 90 or older and still walking"),
        ("born 11/8 they said", "born [DATE] they said"),
        // Initials.
        ("Signed J.K. this morning", "Signed [NAME].[NAME]. this morning"),
    ])
    func unknownFormsAreReplaced(note: String, expected: String) throws {
        let scrubber = try #require(Self.scrubber)
        #expect(scrubber.scrub(note) == expected)
    }

    /// Words of the protocol's own vocabulary are kept once the scrubber keeps them.
    @Test func protocolWordsAreKept() throws {
        let scrubber = try #require(Self.scrubber)
        #expect(scrubber.scrub("took zorbamab 40 mg") == "took [REDACTED] 40 mg")
        #expect(scrubber.keeping(["Zorbamab"]).scrub("took zorbamab 40 mg") == "took zorbamab 40 mg")
    }

    /// A roster name that is a dictionary word wins inside a sentence; outside person context a
    /// lower-case word stays.
    @Test func rosterNamesThatAreWords() throws {
        let grace = Participant(
            id: UUID(), code: "P-0001", sex: .female, timeZone: "UTC", enrolledOn: CivilDate(daysSinceEpoch: 20_000),
            identity: ParticipantIdentity(name: "Grace Park", address: "Apt 2, 12 Elm Ln, Mobile"))
        let scrubber = try Scrubber(roster: [grace])
        #expect(scrubber.scrub("Spoke with Grace about it") == "Spoke with [NAME] about it")
        #expect(scrubber.scrub("a walk in the park helped") == "a walk in the park helped")
        #expect(scrubber.scrub("Park here, stiff today") == "[NAME] here, stiff today")
        #expect(scrubber.scrub("delivered to 12 elm lane") == "delivered to [ADDRESS]")
        #expect(scrubber.scrub("moved to 12 Elm") == "moved to [ADDRESS]")
        #expect(scrubber.scrub("Pharmacy delivers to mobile now") == "Pharmacy delivers to [ADDRESS] now")
        #expect(scrubber.scrub("the joint is more mobile") == "the joint is more mobile")
        #expect(scrubber.scrub("This is GP writing") == "This is [NAME] writing")
    }

    /// The vocabulary built straight into its table (no intermediate sets: issue 28's memory
    /// peak) holds exactly the words sets built the plain way hold: every dictionary key,
    /// built-in word and proper noun, and nothing else (same counts).
    @Test func theSafeWordsAreThoseOfThePlainSetConstruction() throws {
        let environment = ProcessInfo.processInfo.environment["COHORT_DICTIONARY_DIR"].map { URL(fileURLWithPath: $0) }
        let english = environment.map { $0.appendingPathComponent("american-english-large").path } ?? SafeVocabulary.englishWordListPath
        let medical = environment.map { $0.appendingPathComponent("en_med_glut.dic").path } ?? SafeVocabulary.medicalWordListPath
        guard let englishData = FileManager.default.contents(atPath: english), let medicalData = FileManager.default.contents(atPath: medical) else {
            try #require(ProcessInfo.processInfo.environment["CI"] == nil, "CI has the word lists (wamerican-large, hunspell-en-med)")
            return
        }
        var lower: Set<String> = [], capitalised: Set<String> = []
        for line in String(decoding: englishData, as: UTF8.self).split(separator: "\n") {
            let key = TextTokenizer.fold(Array(line.unicodeScalars)[...]).0
            guard key.count >= 3, let first = line.unicodeScalars.first else { continue }
            if first.properties.isUppercase { capitalised.insert(key) } else { lower.insert(key) }
        }
        for line in String(decoding: medicalData, as: UTF8.self).split(separator: "\n") {
            let word = line.split(separator: "/", maxSplits: 1).first ?? line
            guard let first = word.unicodeScalars.first, first.properties.isLowercase,
                word.unicodeScalars.allSatisfy({ $0.properties.isLowercase || $0 == "-" || $0 == "'" })
            else { continue }
            for part in word.split(separator: "-") {
                let key = TextTokenizer.fold(Array(part.unicodeScalars)[...]).0
                if key.count >= 3 { lower.insert(key) }
            }
        }
        let properNouns = capitalised.intersection(lower)
        let all = lower.union(SafeVocabulary.shortWords).union(SafeVocabulary.listed).union(ClinicalVocabulary.words)
            .union(Scrubber.deviceWords).union(Scrubber.relations).union(Scrubber.titles)
        let vocabulary = try SafeVocabulary.load(directory: environment)
        #expect(vocabulary.words.count == all.count && vocabulary.properNouns.count == properNouns.count)
        #expect(all.filter { !vocabulary.contains($0) }.isEmpty)
        #expect(properNouns.filter { !vocabulary.isProperNoun($0) }.isEmpty)
        #expect(capitalised.subtracting(all).filter { vocabulary.contains($0) }.isEmpty, "a proper noun alone is not safe")
    }

    /// The byte-wise loader (ASCII lines folded as bytes, issue 28) builds exactly the table the
    /// line-as-text loader builds, on lines made to tell them apart: capitals, digits, marks,
    /// apostrophes, hyphens, a slash first or last, CR endings, Latin-1 and broken UTF-8 bytes.
    @Test func theByteWiseLoaderBuildsTheSameTable() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dict-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let lines: [[UInt8]] = [
            "apple", "Apple", "APPLE", "Zoë", "zoë", "café", "Café", "O'Brien", "o'brien", "don't", "co-op", "x-ray", "123abc", "ab", "Ab", "abc\r",
            "Abc\r", "MAY", "may", "Muñoz", "muñoz", "naïve", "", "a1b2c3", "über-cool", "Straße", "strasse", "tab\tword", "abc def",
        ].map { Array($0.utf8) } + [[0x63, 0x61, 0x66, 0xE9], [0x43, 0x61, 0x66, 0xE9], [0x78, 0xFF, 0x79, 0x7A], [0xC3], [0x41, 0x62, 0x63, 0xC3, 0x28]]
        let medical: [[UInt8]] = [
            "12345", "arthritis/MS", "arthritis", "/slash-first", "slash-last/", "co-op/X", "x-ray-vision/Y", "Paco/M", "pain's", "ab-cd-efg",
            "naïve/M", "uveitis\r", "HLA-b27", "tnf-alpha/S", "-leading", "trailing-", "a--b", "a/b/c", "zz/", "über/X",
        ].map { Array($0.utf8) } + [[0x61, 0x62, 0x63, 0xFF], [0x61, 0x62, 0x63, 0x2F, 0xFF]]
        func write(_ name: String, _ lines: [[UInt8]]) throws {
            try Data(lines.joined(separator: [0x0A]) + [0x0A]).write(to: directory.appendingPathComponent(name))
        }
        try write("american-english-large", lines)
        try write("en_med_glut.dic", medical)
        let bytewise = try SafeVocabulary.load(directory: directory, bytewise: true)
        let plain = try SafeVocabulary.load(directory: directory, bytewise: false)
        #expect(bytewise.words.keys == plain.words.keys)
        // The proper nouns are gathered in a Set, whose order differs from one instance to the
        // next: the same keys, and as many.
        #expect(Set(bytewise.properNouns.keys) == Set(plain.properNouns.keys) && bytewise.properNouns.count == plain.properNouns.count)
        #expect(["apple", "zoe", "obrien", "may"].allSatisfy(plain.properNouns.keys.contains), "\(plain.properNouns.keys)")
        #expect(plain.words.keys.contains("arthritis") && plain.words.keys.contains("vision") && !plain.words.keys.contains("paco"))
    }

    /// A missing word list is an error that names the package, never a scrubber that keeps
    /// everything or nothing.
    @Test func aMissingWordListNamesThePackage() {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("no-dict-\(UUID().uuidString)")
        #expect {
            _ = try SafeVocabulary.load(directory: empty)
        } throws: { error in
            "\(error)".contains("wamerican-large")
        }
    }
}

/// The rules added for forms a third generator (`HeldOutForms`) composed from roster values;
/// each is generic (a shape of text), so each has cases the generator never wrote, and the safe
/// look-alikes next to them stay.
struct AllowListGenericFormTests {
    @Test(arguments: [
        // Letters spelled out one by one, with any of space, dash or dot between them.
        ("surname is P-E-N-H-A-L-I-G-O-N ok", "surname is [REDACTED] ok"),
        ("spelled r o w a n for you", "spelled [REDACTED] for you"),
        ("code K.E.Z.I.A.H on file", "code [REDACTED] on file"),
        // Hardware addresses and UUIDs: five or more hex groups joined by `:` or `-`.
        ("watch 8C:47:4C:23:4E:1C again", "watch [ID] again"),
        ("band 00-1a-2b-3c-4d-5e paired", "band [ID] paired"),
        ("device 123e4567-e89b-12d3-a456-426614174000 synced", "device [ID] synced"),
        // A phone read out in groups with commas, and ages of a hundred and more in words.
        ("ring nine one two, three oh four, five five six seven please", "ring [PHONE] please"),
        ("I'm a hundred and two this year", "I'm 90 or older this year"),
        ("gran is a hundred and one years old", "gran is 90 or older years old"),
        // Keypad letters glued to a number.
        ("call 1-800-FLOWERS now", "call [PHONE] now"),
        ("line is 274-382-AKIN today", "line is [PHONE] today"),
        // A month, "the" and an ordinal.
        ("back on March the twenty-first", "back on [DATE]"),
        ("seen May the third, 2025 at noon", "seen [DATE] at noon"),
        // Anything glued by an underscore; a capitalised word in apposition with a relation.
        ("my tag is rowan_p lol", "my tag is [REDACTED] lol"),
        ("Baker, my stepdad, drove me in", "[NAME], my stepdad, drove me in"),
        ("Mason, our neighbour.", "[NAME], our neighbour."),
    ])
    func formsAreReplaced(note: String, expected: String) throws {
        let scrubber = try #require(AllowListTests.scrubber)
        #expect(scrubber.scrub(note) == expected)
    }

    /// Look-alikes that are not identifiers stay word for word.
    @Test(arguments: [
        "do 3 sets of 10, 12, 15 reps",
        "COVID-19 booster went fine",
        "the 24-hour urine test is done", "ward 555-BED is quiet",
        "Yesterday, my brother drove me in",
        "Later, my aunt came by with soup",
        "a b c of pain management",
        "stiff at 08:30:15 on the sensor",
        "walked a hundred steps and stopped",
        "one, two, three and stretch",
        "I was first in the queue on March the",
    ])
    func lookAlikesStay(note: String) throws {
        let scrubber = try #require(AllowListTests.scrubber)
        #expect(scrubber.scrub(note) == note)
    }
}

extension AllowListGenericFormTests {
    /// The allow-list's shortcut gives the same text as the full decision on every form above and
    /// on look-alikes made of plainly safe words (`Fisher, my cousin,`, `274-CAKE`, single letters).
    @Test func theShortcutAgreesOnTheGenericForms() throws {
        let scrubber = try #require(AllowListTests.scrubber)
        let notes = [
            "surname is P-E-N-H-A-L-I-G-O-N ok", "spelled r o w a n for you", "watch 8C:47:4C:23:4E:1C again",
            "ring nine one two, three oh four, five five six seven please", "I'm a hundred and two this year",
            "call 1-800-FLOWERS now", "line is 274-CAKE today", "back on March the twenty-first", "my tag is rowan_p lol",
            "Baker, my stepdad, drove me in", "Fisher, my cousin, drove me in", "Yesterday, my brother drove me in",
            "a i a i a", "o t t i l i e", "Mason, our neighbour.", "do 3 sets of 10, 12, 15 reps",
        ]
        for note in notes {
            var fast = ScrubCounts()
            var full = ScrubCounts()
            #expect(scrubber.applyAllowList(note, counts: &fast, fastPath: true) == scrubber.applyAllowList(note, counts: &full, fastPath: false), "\(note)")
        }
    }
}
