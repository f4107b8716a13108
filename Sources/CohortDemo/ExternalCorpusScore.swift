import CohortCore
import CohortDeid
import Foundation

/// A scrubber scored on an ``ExternalCorpus`` as the corpus's README says, without the
/// scrubber's own matcher:
/// - a plant is **leaked** when all of its cores (case and accents folded, word-bounded)
///   survive in the scrubbed note, **partial** when some do, **removed** when none does; a birth
///   date also leaks when the participant's unshifted birth date survives in any of the usual
///   renderings (ISO, US and European numeric, compact, month names);
/// - **clean damage** is the share of clean-note tokens (split at white space) that are not in
///   the output;
/// - a **medication probe** is published when its core survives.
public struct ExternalCorpusScore: Sendable, Codable {
    /// Counts for one kind or one form.
    public struct Tally: Sendable, Codable {
        public var planted = 0
        public var leaked = 0
        public var partial = 0
        /// Share with no core left.
        public var removed: Double { planted == 0 ? 1 : Double(planted - leaked - partial) / Double(planted) }
    }

    public var kinds: [String: Tally] = [:]
    public var forms: [String: Tally] = [:]
    public var planted = 0
    public var leaked = 0
    public var partial = 0
    public var fullNames = 0
    public var emails = 0
    public var phones = 0
    public var unshiftedDates = 0
    public var cleanTokens = 0
    public var cleanTokensAltered = 0
    public var medicationProbes = 0
    public var medicationProbesPublished = 0
    public var seconds = 0.0
    /// Up to 40 leaked plants' kind, form and scrubbed note (for the developer; never a real person's).
    public var examples: [String] = []

    /// Share of planted identifiers removed whole.
    public var removed: Double { planted == 0 ? 1 : Double(planted - leaked - partial) / Double(planted) }
    /// Share of clean-note tokens altered.
    public var cleanDamage: Double { cleanTokens == 0 ? 0 : Double(cleanTokensAltered) / Double(cleanTokens) }

    /// Whether the targets of issue 26 hold: ≥ 99.5% removed, no full name, email, phone or
    /// unshifted date, ≤ 2% clean damage, no medication probe published.
    public var meetsTargets: Bool {
        removed >= 0.995 && fullNames == 0 && emails == 0 && phones == 0 && unshiftedDates == 0 && cleanDamage <= 0.02
            && medicationProbesPublished == 0
    }

    /// The participant's date shift in the measurement: a few whole weeks back, never zero.
    public static func shiftDays(_ code: String) -> Int {
        var h: UInt32 = 2_166_136_261
        for b in code.utf8 { h = (h ^ UInt32(b)) &* 16_777_619 }
        return -7 * Int(1 + h % 20)
    }

    /// cohort's ``Scrubber`` for the corpus roster (keeping `vocabulary` words too), scored.
    public static func scoreCohortScrubber(_ corpus: ExternalCorpus, vocabulary words: [String] = []) throws -> ExternalCorpusScore {
        let scrubber = try Scrubber(roster: corpus.participants).keeping(words)
        return score(corpus) { text, code in
            var counts = ScrubCounts()
            return scrubber.scrub(text, counts: &counts, shiftDays: shiftDays(code))
        }
    }

    /// Scrubs every note of `corpus` with `scrub(text, participant code)` and scores the output.
    public static func score(_ corpus: ExternalCorpus, scrub: (String, String) -> String) -> ExternalCorpusScore {
        scorePublished(corpus) { Optional(scrub($0, $1)) }
    }

    /// Scores what an export published: `published(text, participant code)` is the published
    /// text, or nil when the note was not published (its participant left out): nothing of it
    /// leaks, and a clean note not published is not counted as damaged.
    public static func scorePublished(_ corpus: ExternalCorpus, published: (String, String) -> String?) -> ExternalCorpusScore {
        var result = ExternalCorpusScore()
        let started = Date()
        var cache: [String: String?] = [:]
        func output(_ note: String, _ code: String) -> String? {
            let key = code + "\u{1}" + note
            if let done = cache[key] { return done }
            let output = published(note, code)
            cache[key] = output
            return output
        }
        func scrubbed(_ note: String, _ code: String) -> String { output(note, code) ?? "" }
        let births = Dictionary(corpus.identities.map { ($0.code, $0.dob) }, uniquingKeysWith: { a, _ in a })
        for plant in corpus.plants {
            var output = fold(scrubbed(plant.note, plant.participant))
            // "90 or older" is the scrubber's own text for an age over 89, not the age.
            if plant.kind == "age>89" { output = output.replacingOccurrences(of: "90 or older", with: " ") }
            let surviving = plant.cores.filter { contains(output, fold($0)) }.count
            var leaked = !plant.cores.isEmpty && surviving == plant.cores.count
            var partial = !leaked && surviving > 0
            if plant.kind == "dob", let dob = births[plant.participant] ?? nil, let date = CivilDate(iso: dob),
                renderings(date).contains(where: { contains(output, fold($0)) })
            {
                if !leaked { partial = false }
                leaked = true
            }
            result.planted += 1
            result.kinds[plant.kind, default: Tally()].planted += 1
            result.forms[plant.kind + "/" + plant.form, default: Tally()].planted += 1
            if leaked || partial {
                if leaked {
                    result.leaked += 1
                    result.kinds[plant.kind, default: Tally()].leaked += 1
                    result.forms[plant.kind + "/" + plant.form, default: Tally()].leaked += 1
                } else {
                    result.partial += 1
                    result.kinds[plant.kind, default: Tally()].partial += 1
                    result.forms[plant.kind + "/" + plant.form, default: Tally()].partial += 1
                }
                if result.examples.count < 400 {
                    result.examples.append("\(plant.kind)/\(plant.form): \(scrubbed(plant.note, plant.participant))")
                }
                switch plant.kind {
                case "name" where leaked && plant.cores.count >= 2: result.fullNames += 1
                case "email": result.emails += 1
                case "phone": result.phones += 1
                case "dob", "event-date": result.unshiftedDates += 1
                default: break
                }
            }
        }
        for note in corpus.clean {
            guard let published = output(note.note, note.participant) else { continue }
            let input = note.note.split(whereSeparator: \.isWhitespace).map(String.init)
            var output: [String: Int] = [:]
            for token in published.split(whereSeparator: \.isWhitespace) { output[String(token), default: 0] += 1 }
            result.cleanTokens += input.count
            for token in input {
                if let n = output[token], n > 0 {
                    output[token] = n - 1
                } else {
                    result.cleanTokensAltered += 1
                    if result.examples.count < 400 { result.examples.append("clean: \(token) ⟶ \(scrubbed(note.note, note.participant))") }
                }
            }
        }
        for probe in corpus.medicationProbes {
            result.medicationProbes += 1
            if contains(fold(scrubbed(probe.text, probe.participant)), fold(probe.core)) {
                result.medicationProbesPublished += 1
                if result.examples.count < 400 { result.examples.append("medication: \(scrubbed(probe.text, probe.participant))") }
            }
        }
        result.seconds = Date().timeIntervalSince(started)
        return result
    }

    /// `text` case- and accent-folded.
    static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: Locale(identifier: "en_US_POSIX"))
    }

    /// Whether `needle` occurs in `haystack` with no letter or digit right before or after it.
    static func contains(_ haystack: String, _ needle: String) -> Bool {
        guard !needle.isEmpty else { return false }
        var range = haystack.startIndex..<haystack.endIndex
        while let found = haystack.range(of: needle, options: [.literal], range: range) {
            let before = found.lowerBound > haystack.startIndex ? haystack[haystack.index(before: found.lowerBound)] : " "
            let after = found.upperBound < haystack.endIndex ? haystack[found.upperBound] : " "
            let startsWord = !(needle.first?.isLetter == true || needle.first?.isNumber == true) || !(before.isLetter || before.isNumber)
            let endsWord = !(needle.last?.isLetter == true || needle.last?.isNumber == true) || !(after.isLetter || after.isNumber)
            if startsWord && endsWord { return true }
            range = haystack.index(after: found.lowerBound)..<haystack.endIndex
        }
        return false
    }

    static let months = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December",
    ]

    /// The usual renderings of `date` with its year.
    static func renderings(_ date: CivilDate) -> [String] {
        let y = String(date.year)
        let m = String(date.month)
        let d = String(date.day)
        func pad(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let mm = pad(date.month)
        let dd = pad(date.day)
        let month = months[date.month - 1]
        return [
            "\(y)-\(mm)-\(dd)", "\(y)/\(mm)/\(dd)", "\(mm)/\(dd)/\(y)", "\(m)/\(d)/\(y)", "\(dd)/\(mm)/\(y)", "\(dd).\(mm).\(y)",
            "\(y)\(mm)\(dd)", "\(month) \(d), \(y)", "\(month) \(d) \(y)", "\(d) \(month) \(y)", "\(dd)\(month.prefix(3))\(y)",
            "\(month.prefix(3)) \(d) \(y)", "\(month.prefix(3)) \(d), \(y)",
        ]
    }

    /// Per kind and per form: planted, leaked, partial, removed; then the totals and the targets.
    public func render(title: String) -> String {
        var lines = [title, "kind                     planted  leaked  partial  removed"]
        func row(_ name: String, _ t: Tally) -> String {
            name.padding(toLength: 24, withPad: " ", startingAt: 0)
                + String(format: " %7d %7d %8d  %6.2f%%", t.planted, t.leaked, t.partial, 100 * t.removed)
        }
        for (kind, t) in kinds.sorted(by: { $0.key < $1.key }) { lines.append(row(kind, t)) }
        lines.append(String(format: "all                      %7d %7d %8d  %6.2f%%  (target ≥ 99.50%%)", planted, leaked, partial, 100 * removed))
        lines.append("")
        lines.append("forms that leak")
        for (form, t) in forms.sorted(by: { $0.key < $1.key }) where t.leaked + t.partial > 0 { lines.append(row(form, t)) }
        lines.append("")
        lines.append(
            "full names \(fullNames), emails \(emails), phones \(phones), unshifted dates \(unshiftedDates) (targets 0); "
                + "medication probes published \(medicationProbesPublished) of \(medicationProbes) (target 0)")
        lines.append(String(format: "clean damage %.2f%% of %d tokens (target ≤ 2%%); %.2f s", 100 * cleanDamage, cleanTokens, seconds))
        return lines.joined(separator: "\n")
    }
}
