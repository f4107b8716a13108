import CohortCore
import Foundation
import Testing

@testable import CohortDemo

/// The scrubber against the adversarial corpus: the targets of issue #13, measured by the
/// independent word-count check of ``ScrubMeasurement``.
struct ScrubMeasurementTests {
    @Test func adversarialCorpusMeetsTheTargets() throws {
        let corpus = AdversarialCorpus()
        #expect(corpus.participants.count >= 200)
        #expect(corpus.notes.filter { !$0.isClean }.count >= 5_000)
        let (m, _) = try ScrubMeasurement.measureCohortScrubber(corpus)
        print(m.render())
        #expect(m.recall >= 0.995, "\(m.render())")
        #expect(m.leaks(["full_name", "lower_case", "middle_name", "line_break"]) == 0)
        #expect(m.leaks(["email", "obfuscated_email"]) == 0)
        #expect(m.leaks(["phone"]) == 0)
        #expect(m.leaks(["date"]) == 0)
        #expect(m.datesShiftedCorrectly == m.dates)
        #expect(m.cleanAltered <= 0.02)
        // Every kind is planted, and often.
        #expect(m.kinds.allSatisfy { $0.planted >= 200 })
    }

    /// The check itself can fail: unscrubbed notes leak everything, and a scrubber that blanks
    /// every note alters every clean word.
    @Test func theCheckSeesLeaksAndDamage() {
        let corpus = AdversarialCorpus(seed: 5, participantCount: 20, plantNotes: 300, cleanNotes: 100)
        let (kept, _) = ScrubMeasurement.measure(corpus) { text, _ in text }
        #expect(kept.removed == 0)
        #expect(kept.cleanAltered == 0)
        let (blank, _) = ScrubMeasurement.measure(corpus) { _, _ in "" }
        #expect(blank.removed == blank.planted)
        #expect(blank.cleanAltered == 1)
    }

    @Test func theCorpusIsDeterministic() {
        let a = AdversarialCorpus(seed: 7, participantCount: 30, plantNotes: 200, cleanNotes: 20)
        let b = AdversarialCorpus(seed: 7, participantCount: 30, plantNotes: 200, cleanNotes: 20)
        #expect(a.notes == b.notes)
        #expect(a.participants == b.participants)
    }
}
