import CohortCore
import CohortDeid
import Foundation
import Testing

@testable import CohortDemo

/// Identifier forms composed by transforming roster values (``HeldOutForms``, a third method):
/// what an export would publish — a form the scrubber leaves and the residual scan does not
/// flag — per form, against issue 26's target (≤ 5% published overall).
struct HeldOutFormsTests {
    @Test func heldOutFormsArePublishedAtMostFivePercent() throws {
        let corpus = HeldOutForms.make()
        #expect(corpus.plants.count >= 5_000)
        let words = ExternalCorpusTests.medicationWords
        let m = HeldOutForms.measure(
            corpus, scrubber: try Scrubber(roster: corpus.participants).keeping(words),
            scanner: ResidualScanner(roster: corpus.participants).keeping(words))
        print(m.render(title: "held-out forms (\(corpus.plants.count) plants, \(corpus.participants.count) participants)"))
        if let dump = ProcessInfo.processInfo.environment["COHORT_SCORE_DUMP_3"] {
            try (m.examples + m.scrubberScore.examples).joined(separator: "\n").write(toFile: dump, atomically: true, encoding: .utf8)
        }
        #expect(m.all.publishedShare <= 0.05, "\(m.examples.prefix(20).joined(separator: "\n"))")
        #expect(m.scrubberScore.fullNames == 0)
        #expect(m.scrubberScore.cleanDamage <= 0.02)
        #expect(m.scrubberScore.medicationProbesPublished == 0)
    }

    /// The measurement can fail: notes left as they are leak every form, and the scan flags
    /// only some of them, so much is published; the scan alone is no scrubber.
    @Test func unscrubbedFormsAreMostlyLeakedAndTheScanIsCounted() throws {
        let corpus = HeldOutForms.make(seed: 5, participants: 16)
        var leaked = 0
        var published = 0
        let scanner = ResidualScanner(roster: corpus.participants)
        for plant in corpus.plants {
            let folded = ExternalCorpusScore.fold(plant.note)
            let kept = plant.cores.contains { ExternalCorpusScore.contains(folded, ExternalCorpusScore.fold($0)) }
            if kept { leaked += 1 }
            if kept && scanner.kinds(inLine: plant.note, freeText: true).isEmpty { published += 1 }
        }
        #expect(leaked == corpus.plants.count)
        #expect(published > 0)
        #expect(published < leaked)
    }

    @Test func theCorpusIsDeterministicAndTransformsTheRoster() {
        let a = HeldOutForms.make(seed: 9, participants: 8)
        let b = HeldOutForms.make(seed: 9, participants: 8)
        #expect(a.plants.map(\.note) == b.plants.map(\.note))
        // Non-Latin roster names appear in notes only in Latin letters.
        let cyrillic = a.participants.filter { $0.identity?.name.unicodeScalars.contains { (0x400...0x4FF).contains($0.value) } == true }
        #expect(!cyrillic.isEmpty)
        for participant in cyrillic {
            let notes = a.plants.filter { $0.participant == participant.code }.map(\.note)
            #expect(notes.allSatisfy { !$0.unicodeScalars.contains { (0x400...0x4FF).contains($0.value) } })
        }
        #expect(HeldOutForms.transliterate("Светлана Кузнецова") == "Svetlana Kuznetsova")
        #expect(HeldOutForms.transliterate("Δημήτρης") == "Dimitris")
        #expect(HeldOutForms.yearWords(1976) == "nineteen seventy-six")
        #expect(HeldOutForms.ageWords(101, hyphen: true) == "a hundred and one")
    }
}
