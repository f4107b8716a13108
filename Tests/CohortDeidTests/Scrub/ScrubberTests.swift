import CohortCore
import Foundation
import Testing

@testable import CohortDeid

/// A small roster with the awkward cases: accents, apostrophes (straight and typographic),
/// hyphens, possessive device names.
enum PlantedRoster {
    static let participants: [Participant] = [
        participant(
            "00000000-0000-4000-8000-000000000001", code: "P-0001", name: "José García", email: "jose.garcia@example.org",
            phone: "(555) 123-4567", birth: "1980-03-14", address: "45 Elm Avenue Apt 2, Springfield, IL 62704", zip: "62704",
            mrn: "A1234567", devices: ["José's Apple Watch"]),
        participant(
            "00000000-0000-4000-8000-000000000002", code: "P-0002", name: "Zoë O'Brien", email: "zoe.obrien@mail.example.com",
            phone: "+1 555 987 6543", birth: "1975-11-02", address: "123 Main St, Shelbyville, IL 62565", zip: "62565",
            mrn: "99887766", devices: ["Fitbit Charge 6 SN4F7K2Q9"]),
        participant(
            "00000000-0000-4000-8000-000000000003", code: "P-0003", name: "Katherine Smith-Jones", email: "kat@example.net",
            phone: "555.246.8101", birth: "1992-07-04", address: "9 Birch Lane, Ogdenville, IL 60000", zip: "60000",
            mrn: "MRN-55443322", devices: []),
        participant(
            "00000000-0000-4000-8000-000000000004", code: "P-0004", name: "Siobhán D’Angelo", email: "siobhan@example.ie",
            phone: "555-369-1215", birth: "1988-12-25", address: "77 Harbor Blvd, Capital City, IL 60001", zip: "60001",
            mrn: "B7654321", devices: ["Siobhán’s iPhone"]),
    ]

    static func participant(
        _ id: String, code: String, name: String, email: String, phone: String, birth: String, address: String, zip: String,
        mrn: String, devices: [String]
    ) -> Participant {
        Participant(
            id: UUID(uuidString: id) ?? UUID(), code: code, sex: .female, timeZone: "America/Chicago",
            enrolledOn: Fixtures.date("2025-01-06"),
            identity: ParticipantIdentity(
                name: name, email: email, phone: phone, birthDate: Fixtures.date(birth), address: address, zip: zip, mrn: mrn,
                devices: devices))
    }

    /// Every identifier value on the roster, folded, for "nothing left" checks.
    static var forbiddenFragments: [String] {
        var result: [String] = []
        for p in participants {
            guard let identity = p.identity else { continue }
            result += identity.name.split(whereSeparator: { $0 == " " || $0 == "-" }).map(String.init)
            result += [identity.email ?? "", identity.mrn ?? "", p.code]
            result.append(String(identity.phone?.filter(\.isNumber).suffix(7) ?? ""))
        }
        return result.filter { !$0.isEmpty }
    }

    static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).replacingOccurrences(of: "’", with: "'")
    }
}

struct ScrubberTests {
    let scrubber: Scrubber

    init() throws { scrubber = try Scrubber(roster: PlantedRoster.participants) }

    @Test(arguments: [
        ("Saw José García today", "Saw [NAME] today"),
        ("jose garcia called", "[NAME] called"),
        ("GARCÍA, José was late", "[NAME] was late"),
        ("José’s Apple Watch died", "[DEVICE] died"),
        ("Zoe's iPhone 15 Pro is charging", "[DEVICE] is charging"),
        ("Called Zoë O’Brien's mom", "Called [NAME]'s mom"),
        ("obrien and dangelo", "[NAME] and [NAME]"),
        ("Pain was 5 today, walked a lot", "Pain was 5 today, walked a lot"),
        ("Took 2 tablets at 08:30 after breakfast", "Took 2 tablets at 08:30 after breakfast"),
        ("The rose garden was nice, rested by the window", "The rose garden was nice, rested by the window"),
    ])
    func exactReplacements(input: String, expected: String) {
        #expect(scrubber.scrub(input) == expected)
    }

    @Test(arguments: [
        ("call me at (555) 123-4567", ScrubToken.phone),
        ("cell +1 555 123 4567", .phone),
        ("or 555.123.4567", .phone),
        ("or 555-123-4567 after 5", .phone),
        ("her number 5552468101", .phone),
        ("my sister <jane.doe@example.com> knows", .email),
        ("write to ZOE.OBRIEN@mail.example.com", .email),
        ("ssn 123-45-6789", .ssn),
        ("SSN: 123456789", .ssn),
        ("MRN 12345678 at the clinic", .mrn),
        ("MRN: A1234567", .mrn),
        ("record A1234567 again", .mrn),
        ("see https://example.com/path?q=1.", .url),
        ("visit www.clinic-example.org now", .url),
        ("from 192.168.10.12", .ip),
        ("v6 fe80::1ff:fe23:4567:890a", .ip),
        ("lives at 123 Main St near the park", .address),
        ("moved to 45 Elm Avenue Apt 2 last year", .address),
        ("PO Box 1234", .address),
        ("Springfield, IL 62704", .address),
        ("on 03/14/2025 it hurt", .date),
        ("since 14 March 2025", .date),
        ("since March 14, 2025", .date),
        ("flare 2025-03-14T08:30:00Z", .date),
        ("seen 14.03.2025", .date),
        ("born 3/14/80", .date),
        ("on March 14th", .date),
        ("study code P-0003", .id),
        ("Katherine called", .name),
        ("Kate called", .name),
        ("told Smith-Jones", .name),
    ])
    func detectors(input: String, token: ScrubToken) {
        var counts = ScrubCounts()
        let output = scrubber.scrub(input, counts: &counts)
        #expect(output.contains(token.text), "\(output)")
        #expect(counts[token] >= 1)
        for fragment in ["555", "123-45", "6789", "example", "A1234567", "12345678", "192.168", "fe80", "Main St", "Elm", "2025", "62704"] {
            #expect(!output.contains(fragment), "\(output)")
        }
    }

    @Test func nicknameBetweenNamesIsRemoved() {
        let output = scrubber.scrub("Katherine \"Kit\" Smith-Jones and José (Pepito) García came")
        #expect(!output.contains("Kit") && !output.contains("Pepito"), "\(output)")
        #expect(!PlantedRoster.fold(output).contains("smith"))
    }

    /// Nicknames are names in any case, except those that are ordinary words ("kit" of
    /// Katherine), which need evidence of a person like any vocabulary word.
    @Test func nicknamesInAnyCaseButOrdinaryWordsStay() {
        #expect(scrubber.scrub("the kate bush song") == "the [NAME] bush song")
        #expect(scrubber.scrub("packed the first aid kit") == "packed the first aid kit")
        #expect(scrubber.scrub("Went with Kit to the clinic") == "Went with [NAME] to the clinic")
    }

    @Test func tokensAreNotScrubbedAgain() {
        let once = scrubber.scrub("José García: 555-123-4567, jose.garcia@example.org")
        #expect(scrubber.scrub(once) == once)
        #expect(once == "[NAME]: [PHONE], [EMAIL]")
    }

    @Test func decomposedAccentsMatchToo() {
        let decomposed = "Jose\u{0301} Garci\u{0301}a"
        #expect(scrubber.scrub("met \(decomposed)") == "met [NAME]")
    }

    @Test func countsByKind() {
        var counts = ScrubCounts()
        _ = scrubber.scrub("José García, (555) 123-4567, 03/14/2025, José", counts: &counts)
        #expect(counts[.name] == 2)
        #expect(counts[.phone] == 1)
        #expect(counts[.date] == 1)
        #expect(counts.total == 4)
    }
}
