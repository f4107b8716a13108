import CohortCore
import Foundation
import Testing

@testable import CohortDeid

/// Participants whose names are ordinary words.
enum WordNamesRoster {
    static let participants: [Participant] = [
        person("00000000-0000-4000-8000-0000000000a1", "P-0101", "Hope Field"),
        person("00000000-0000-4000-8000-0000000000a2", "P-0102", "Robert Little"),
        person("00000000-0000-4000-8000-0000000000a3", "P-0103", "May Bath"),
        person("00000000-0000-4000-8000-0000000000a4", "P-0104", "Mark Anthony Long"),
        person("00000000-0000-4000-8000-0000000000a5", "P-0105", "Eleanor Parkinson"),
        person("00000000-0000-4000-8000-0000000000a6", "P-0106", "Bob Hand"),
    ]

    static func person(_ id: String, _ code: String, _ name: String) -> Participant {
        Participant(
            id: UUID(uuidString: id) ?? UUID(), code: code, sex: .female, timeZone: "Europe/London", enrolledOn: Fixtures.date("2025-01-06"),
            identity: ParticipantIdentity(name: name, birthDate: Fixtures.date("1961-05-02")))
    }
}

extension ScrubberTests {
    @Test(arguments: [
        "call 06 12 34 56 78 tonight", "call +33 6 12 34 56 78 tonight", "call 0171 234 5678 tonight", "call 020 7946 0958 tonight",
        "call +44 (0)20 7946 0958 tonight", "call 07700 900123 tonight", "call 617.555.0134 tonight", "call (617) 555-0134 x123 tonight",
        "call 617-555-0134 ext. 12 tonight", "call +1 617 555 0134 tonight", "call +49 30 1234567 tonight", "call 030/1234567 tonight",
        "call 0151 12345678 tonight", "call +91 98765 43210 tonight", "call 098765 43210 tonight", "call (02) 9876 5432 tonight",
        "call 0412 345 678 tonight", "call +61 2 9876 5432 tonight",
    ])
    func nationalPhoneFormats(note: String) {
        #expect(scrubber.scrub(note) == "call [PHONE] tonight")
    }

    @Test(arguments: [
        ("mail jane dot doe at gmail dot com today", "mail [EMAIL] today"),
        ("mail jane[at]example[dot]com today", "mail [EMAIL] today"),
        ("mail jane (at) example (dot) org today", "mail [EMAIL] today"),
        ("mail jane.doe at example.co.uk today", "mail [EMAIL] today"),
        ("see example.com/path for it", "see [URL] for it"),
        ("read my-site.org.", "read [URL]."),
        ("lives at 12 rue de la Paix now", "lives at [ADDRESS] now"),
        ("wohnt Hauptstraße 12 jetzt", "[REDACTED] [ADDRESS] [REDACTED]"),
        ("postcode SW1A 1AA here", "postcode [ADDRESS] here"),
        ("moved to 10115 Berlin", "moved to [ADDRESS]"),
        ("watch serial number: FX4K29Q7 broke", "watch [DEVICE] broke"),
        ("grandma is aged 93 and well", "grandma is aged 90 or older and well"),
        ("a 93-year-old aunt", "a 90 or older aunt"),
        ("uncle 101 yo now", "uncle 90 or older now"),
        ("aged 45 and well", "aged 45 and well"),
    ])
    func otherForms(note: String, expected: String) {
        #expect(scrubber.scrub(note) == expected)
    }

    @Test(arguments: [
        "pain 7/10 after the walk", "took 1/2 tablet", "BP 120/80 this morning", "walked 10 000 steps", "dose 2.5 mg twice",
        "I hope the pain eases in May", "Will it rain? I will walk anyway", "Parkinson's disease runs in the family",
        "Crohn flare, Achilles tendon sore", "mark the calendar", "stepped on a sample scale", "ice pack on my hand",
        "Slept 7 hours, took Advil at 08:30", "It may be the weather", "saw the long field by the river",
        "Little sleep, long day", "Hope this helps", "The bath helped my back",
    ])
    func cleanNotesStayAsTheyAre(note: String) throws {
        let scrubber = try Scrubber(roster: PlantedRoster.participants + WordNamesRoster.participants)
        var counts = ScrubCounts()
        #expect(scrubber.scrub(note, counts: &counts, shiftDays: -30) == note)
    }

    @Test(arguments: [
        ("Hope Field called", "[NAME] called"),
        ("hope field called", "[NAME] called"),
        ("Talked with Hope about the diary", "Talked with [NAME] about the diary"),
        ("Hope said the pain was less", "[NAME] said the pain was less"),
        ("Mr. Little came in", "Mr. [NAME] came in"),
        ("Bob's knee is worse", "[NAME]'s knee is worse"),
        ("Robert came; Bobby drove", "[NAME] came; [NAME] drove"),
        ("R. Little and M. A. Long", "[NAME] and [NAME]"),
        ("my daughter Emma visited", "my daughter [NAME] visited"),
        ("my daughter Grace visited", "my daughter [NAME] visited"),
        ("Saw Dr. Okafor today", "Saw Dr. [NAME] today"),
        ("Emma Okafor phoned", "[NAME] [NAME] phoned"),
        ("Eleanor Parkinson's knee; Parkinson's disease is not hers", "[NAME]'s knee; Parkinson's disease is not hers"),
        ("note from Hope\nField about sleep", "note from [NAME] about sleep"),
        ("Mark\nLong wrote", "[NAME] wrote"),
        ("eleanor called", "[NAME] called"),
    ])
    func namesWhereTheTextSaysPerson(note: String, expected: String) throws {
        let scrubber = try Scrubber(roster: WordNamesRoster.participants)
        #expect(scrubber.scrub(note) == expected)
    }

    @Test func datesAreShiftedWithThePlantedIdentifiersGone() {
        var counts = ScrubCounts()
        let output = scrubber.scrub("flare started after the long drive on 03/14, José called (555) 123-4567", counts: &counts, shiftDays: -10)
        #expect(output == "flare started after the long drive on 03/04, [NAME] called [PHONE]")
        #expect(counts[.date] == 1)
    }

    @Test func rosterBirthDatesAreReplacedNotShifted() {
        var counts = ScrubCounts()
        #expect(scrubber.scrub("birthday party 03/14/1980 went well", counts: &counts, shiftDays: 20) == "birthday party [DATE] went well")
        #expect(scrubber.scrub("visit on 1980-03-14 too", counts: &counts, shiftDays: 20) == "visit on [DATE] too")
        #expect(scrubber.scrub("visit on 1980-03-15 too", counts: &counts, shiftDays: 20) == "visit on 1980-04-04 too")
        #expect(counts[.date] == 3)
    }
}
