import CohortCore
import Foundation
import Testing

@testable import CohortDeid

/// The scrubber's two shortcuts (skip the regular expression when no alternative can match,
/// skip the roster pass when it cannot change the text) must not change any output or count.
struct ScrubberShortcutTests {
    @Test(arguments: [(1 as UInt64, false), (2, true)])
    func shortcutsChangeNothing(seed: UInt64, large: Bool) throws {
        let roster = large ? ResidualScannerEquivalenceTests.largeRoster : ResidualScannerEquivalenceTests.smallRoster
        let scrubber = try Scrubber(roster: roster)
        var generator = ScanTextGenerator(roster: roster, seed: seed)
        var notes = (0..<3_000).map { _ in generator.line() }
        notes += PlantedCorpus.notes(roster: PlantedRoster.participants, seed: seed).map(\.0)
        notes += ["Pain was 5 today, walked a lot", "Jane's Apple Watch died", "the kate bush song", "Kate called", "felt ok"]
        var changed = 0
        for note in notes {
            var fast = ScrubCounts()
            var reference = ScrubCounts()
            let output = scrubber.scrub(note, counts: &fast)
            let expected = scrubber.scrubWithoutShortcuts(note, counts: &reference)
            #expect(output == expected, "\(note)")
            #expect(fast == reference, "\(note)")
            if output != note { changed += 1 }
        }
        // Both kinds of note occur: many scrubbed, and the plain English ones left alone (the
        // generated lines hold words no dictionary has, which the allow-list replaces).
        #expect(changed > 1_000)
        #expect(notes.count - changed >= 3)
    }
}
