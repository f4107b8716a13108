import CohortCore
import Foundation
import Testing

@testable import CohortDeid

/// Each of the scrubber's passes on its own: what it replaces, what it leaves for the next
/// pass, and what it counts. (``ScrubberTests`` holds the passes together.)
struct PatternPassTests {
    let pass: PatternPass

    init() throws {
        let scrubber = try Scrubber(roster: PlantedRoster.participants)
        pass = try PatternPass(index: scrubber.index)
    }

    @Test func replacesContactPatternsAndCountsThem() {
        var counts = ScrubCounts()
        let out = pass.apply("Write to ann@example.org or see https://example.org/x today", counts: &counts, shiftDays: nil)
        #expect(out == "Write to [EMAIL] or see [URL] today")
        #expect(counts[.email] == 1 && counts[.url] == 1 && counts.total == 2)
    }

    @Test func aScoreIsNoDateAndTheTextIsReturnedAsItIs() {
        var counts = ScrubCounts()
        let text = "Pain 7/10 after the walk"
        #expect(pass.apply(text, counts: &counts, shiftDays: nil) == text)
        #expect(counts.total == 0)
    }

    @Test func anAgeOverEightyNineKeepsItsWord() {
        var counts = ScrubCounts()
        #expect(pass.apply("Grandma, aged 93, came along", counts: &counts, shiftDays: nil) == "Grandma, aged 90 or older, came along")
        #expect(counts[.age] == 1)
    }

    @Test func datesAreShiftedInTheirFormatButARosterBirthDateIsNot() {
        var counts = ScrubCounts()
        #expect(pass.apply("Seen on 2025-03-01.", counts: &counts, shiftDays: 10) == "Seen on 2025-03-11.")
        #expect(pass.apply("Seen on 2025-03-01.", counts: &counts, shiftDays: nil) == "Seen on [DATE].")
        // José García's birth date (1980-03-14) is replaced, never shifted.
        #expect(pass.apply("Born 1980-03-14.", counts: &counts, shiftDays: 10) == "Born [DATE].")
        #expect(counts[.date] == 3)
    }

    @Test func namesAreLeftToTheRosterPass() {
        var counts = ScrubCounts()
        #expect(pass.apply("José García called", counts: &counts, shiftDays: nil) == "José García called")
    }
}

struct WordPatternPassTests {
    let pass: WordPatternPass

    init() throws {
        pass = try WordPatternPass()
    }

    @Test(arguments: [
        ("mail jane dot doe at gmail dot com today", "mail [EMAIL] today"),
        ("mail jane[at]example[dot]com today", "mail [EMAIL] today"),
    ])
    func obfuscatedEmails(text: String, expected: String) {
        var counts = ScrubCounts()
        #expect(pass.apply(text, counts: &counts) == expected)
        #expect(counts[.email] == 1)
    }

    @Test func textWithoutAMatchIsReturnedAsItIs() {
        var counts = ScrubCounts()
        #expect(pass.apply("walked at the park", counts: &counts) == "walked at the park")
        #expect(counts.total == 0)
    }
}

struct RosterPassTests {
    static let hopeField = PlantedRoster.participant(
        "00000000-0000-4000-8000-000000000009", code: "P-0009", name: "Hope Field", email: "hope@example.org", phone: "555-010-2030",
        birth: "1970-01-02", address: "1 Oak Road, Reading, IL 60002", zip: "60002", mrn: "C1112223", devices: [])
    let pass: RosterPass

    init() throws {
        let scrubber = try Scrubber(roster: PlantedRoster.participants + [Self.hopeField])
        pass = RosterPass(index: scrubber.index, vocabulary: scrubber.vocabulary)
    }

    func apply(_ text: String) -> (String, ScrubCounts) {
        var counts = ScrubCounts()
        let out = pass.apply(text, counts: &counts)
        return (out, counts)
    }

    @Test func aRosterNameInAnyCaseKeepsItsPossessive() {
        #expect(apply("Saw José García's doctor").0 == "Saw [NAME]'s doctor")
        #expect(apply("saw jose garcia today").0 == "saw [NAME] today")
    }

    @Test func aNameSplitAcrossALineBreakIsOneName() {
        let (out, counts) = apply("Met José\nGarcía at noon")
        #expect(out == "Met [NAME] at noon")
        #expect(counts[.name] == 1)
    }

    @Test func rosterPhoneDigitsInAnyFormatting() {
        let (out, counts) = apply("call 555 123 4567 today")
        #expect(out == "call [PHONE] today")
        #expect(counts[.phone] == 1)
    }

    @Test func aRosterWordThatIsVocabularyWaitsForEvidence() {
        #expect(apply("I hope the field trip helps").0 == "I hope the field trip helps")
        #expect(apply("Yesterday Hope said the pain eased").0 == "Yesterday [NAME] said the pain eased")
        #expect(apply("Walked with Hope Field").0 == "Walked with [NAME]")
    }

    @Test func peopleNotOnTheRosterAndTheirSurnames() {
        #expect(apply("my daughter Emma Okafor visited").0 == "my daughter [NAME] [NAME] visited")
    }

    @Test func aDeviceNamedAfterItsOwner() {
        // The owner is a given name; the device word after the possessive makes it one device.
        let (out, counts) = apply("Emma's iphone died")
        #expect(out == "[DEVICE] died")
        #expect(counts[.device] == 1 && counts[.name] == 0)
        // Capitalized words after a name are taken as its surname first (the earlier step).
        #expect(apply("Emma's Apple Watch died").0 == "[NAME]'s [NAME] [NAME] died")
    }

    @Test func textWithoutIdentifiersIsReturnedAsItIs() {
        let (out, counts) = apply("slept badly, knees sore")
        #expect(out == "slept badly, knees sore")
        #expect(counts.total == 0)
    }
}
