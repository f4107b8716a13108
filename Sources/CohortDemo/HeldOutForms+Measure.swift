import CohortCore
public import CohortDeid
import Foundation

/// What of ``HeldOutForms`` an export would publish, per form.
public struct HeldOutMeasurement: Sendable {
    /// One form (or kind, or the whole corpus).
    public struct Tally: Sendable {
        public var planted = 0
        /// The scrubber's output keeps the form (all or part of its cores, ``ExternalCorpusScore``'s rule).
        public var leaked = 0
        /// …and the residual scan finds nothing in that output, so the export would publish it.
        public var published = 0
        public var leakedShare: Double { planted == 0 ? 0 : Double(leaked) / Double(planted) }
        public var publishedShare: Double { planted == 0 ? 0 : Double(published) / Double(planted) }
    }

    public var forms: [String: Tally] = [:]
    public var kinds: [String: Tally] = [:]
    public var all = Tally()
    /// The scrubber's score on the corpus (clean damage, full names, medication probes…).
    public var scrubberScore: ExternalCorpusScore
    /// Up to 60 published forms: form and the scrubbed note (generated people only).
    public var examples: [String] = []

    /// Per form: planted, leaked by the scrubber, published (leaked and not flagged by the scan).
    public func render(title: String) -> String {
        var lines = [title, "form                                   planted  leaked  published"]
        func row(_ name: String, _ t: Tally) -> String {
            name.padding(toLength: 38, withPad: " ", startingAt: 0)
                + String(format: " %7d  %6.2f%%  %8.2f%%", t.planted, 100 * t.leakedShare, 100 * t.publishedShare)
        }
        for (form, t) in forms.sorted(by: { $0.key < $1.key }) { lines.append(row(form, t)) }
        lines.append("")
        for (kind, t) in kinds.sorted(by: { $0.key < $1.key }) { lines.append(row("kind " + kind, t)) }
        lines.append(row("all (target: published ≤ 5%)", all))
        lines.append(
            String(
                format: "clean damage %.2f%% of %d tokens; medication probes published %d of %d", 100 * scrubberScore.cleanDamage,
                scrubberScore.cleanTokens, scrubberScore.medicationProbesPublished, scrubberScore.medicationProbes))
        return lines.joined(separator: "\n")
    }
}

extension HeldOutForms {
    /// ``measure(_:scrubber:scanner:)`` with cohort's scrubber and scanner for the corpus roster,
    /// both keeping `words` (the protocol's vocabulary).
    public static func measure(_ corpus: ExternalCorpus, keeping words: [String]) throws -> HeldOutMeasurement {
        measure(
            corpus, scrubber: try Scrubber(roster: corpus.participants).keeping(words),
            scanner: ResidualScanner(roster: corpus.participants).keeping(words))
    }

    /// Scrubs every note of `corpus` (with the participant's date shift), asks `scanner` about
    /// each output, and counts per form what leaks and what would be published: a leaked form
    /// the scan does not flag. The leak rule is ``ExternalCorpusScore``'s (folded cores,
    /// word-bounded), not the scrubber's matcher.
    public static func measure(_ corpus: ExternalCorpus, scrubber: Scrubber, scanner: ResidualScanner) -> HeldOutMeasurement {
        var outputs: [String: String] = [:]
        func output(_ note: String, _ code: String) -> String {
            let key = code + "\u{1}" + note
            if let done = outputs[key] { return done }
            var counts = ScrubCounts()
            let result = scrubber.scrub(note, counts: &counts, shiftDays: ExternalCorpusScore.shiftDays(code))
            outputs[key] = result
            return result
        }
        let score = ExternalCorpusScore.score(corpus) { output($0, $1) }
        var result = HeldOutMeasurement(scrubberScore: score)
        let births = Dictionary(corpus.identities.map { ($0.code, $0.dob) }, uniquingKeysWith: { a, _ in a })
        for plant in corpus.plants {
            let scrubbed = output(plant.note, plant.participant)
            var folded = ExternalCorpusScore.fold(scrubbed)
            if plant.kind == "age>89" { folded = folded.replacingOccurrences(of: "90 or older", with: " ") }
            var leaked = plant.cores.contains { ExternalCorpusScore.contains(folded, ExternalCorpusScore.fold($0)) }
            if plant.kind == "dob", let dob = births[plant.participant] ?? nil, let date = CivilDate(iso: dob),
                ExternalCorpusScore.renderings(date).contains(where: { ExternalCorpusScore.contains(folded, ExternalCorpusScore.fold($0)) })
            {
                leaked = true
            }
            let published = leaked && scanner.kinds(inLine: scrubbed, freeText: true).isEmpty
            for key in [plant.kind + "/" + plant.form] {
                result.forms[key, default: .init()].add(leaked: leaked, published: published)
            }
            result.kinds[plant.kind, default: .init()].add(leaked: leaked, published: published)
            result.all.add(leaked: leaked, published: published)
            if published, result.examples.count < 60 { result.examples.append("\(plant.kind)/\(plant.form): \(scrubbed)") }
        }
        return result
    }
}

extension HeldOutMeasurement.Tally {
    mutating func add(leaked: Bool, published: Bool) {
        planted += 1
        if leaked { self.leaked += 1 }
        if published { self.published += 1 }
    }
}
