import CohortCore
import CohortDeid
public import Foundation

/// Recall and precision of the free-text scrubber on an ``AdversarialCorpus``, decided without
/// the scrubber's own matcher: the output is compared with the ground truth by folded word
/// counts written here (case and accents folded, words are runs of letters and digits).
///
/// - A plant is **removed** when none of its words (3+ characters, or 2+ digits) is left: every
///   such word occurs in the output fewer times than in the note, by at least the number of
///   times the note's plants hold it. A date is removed when its text is gone; it is
///   **shifted correctly** when the corpus's own rendering of the shifted date, or `[DATE]`,
///   is in its place.
/// - On clean notes, the **altered fraction** is the share of the note's words that are not in
///   the output (as counts).
/// - **Precision** per token is an estimate: of the typed tokens the scrubber put in (`[PHONE]`…),
///   how many the plants of that kind account for; every token in a clean note is a false one.
public struct ScrubMeasurement: Sendable, Codable {
    /// Results for one plant kind.
    public struct Kind: Sendable, Codable {
        public var kind: String
        public var planted = 0
        public var removed = 0
        /// Recall: removed / planted.
        public var recall: Double { planted == 0 ? 1 : Double(removed) / Double(planted) }
    }

    /// Results for one typed token.
    public struct Token: Sendable, Codable {
        public var token: String
        public var emitted = 0
        public var expected = 0
        public var inCleanNotes = 0
        /// Precision estimate: min(expected, emitted) / emitted.
        public var precision: Double { emitted == 0 ? 1 : Double(min(expected, emitted - inCleanNotes)) / Double(emitted) }
    }

    public var kinds: [Kind]
    public var tokens: [Token]
    public var planted: Int
    public var removed: Int
    public var datesShiftedCorrectly: Int
    public var dates: Int
    public var cleanTokens: Int
    public var cleanTokensAltered: Int
    public var notes: Int
    public var seconds: Double

    /// Share of planted identifiers removed.
    public var recall: Double { planted == 0 ? 1 : Double(removed) / Double(planted) }
    /// Share of clean-note words altered.
    public var cleanAltered: Double { cleanTokens == 0 ? 0 : Double(cleanTokensAltered) / Double(cleanTokens) }

    /// Leaks of the kinds that must never leak: full names (in any case, with a middle name, split
    /// across lines), emails, phone numbers, unshifted dates.
    public func leaks(_ kinds: [String]) -> Int {
        self.kinds.filter { kinds.contains($0.kind) }.reduce(0) { $0 + $1.planted - $1.removed }
    }

    /// Which plant kinds become which token (for the precision estimate).
    static let tokenOfKind: [String: String] = [
        "email": "EMAIL", "obfuscated_email": "EMAIL", "phone": "PHONE", "address": "ADDRESS", "postcode": "ADDRESS", "mrn": "MRN",
        "ssn": "SSN", "url": "URL", "ip": "IP", "device": "DEVICE", "serial": "DEVICE", "age": "AGE", "date": "DATE",
    ]

    /// cohort's ``Scrubber``, built from the corpus's roster, measured on the corpus; also
    /// returns each note's output.
    public static func measureCohortScrubber(_ corpus: AdversarialCorpus) throws -> (ScrubMeasurement, [String]) {
        let scrubber = try Scrubber(roster: corpus.participants)
        return measure(corpus) { text, shift in
            var counts = ScrubCounts()
            return scrubber.scrub(text, counts: &counts, shiftDays: shift)
        }
    }

    /// Scrubs every note of `corpus` with `scrub(text, shiftDays)` and measures the result.
    public static func measure(_ corpus: AdversarialCorpus, scrub: (String, Int) -> String) -> (ScrubMeasurement, [String]) {
        var kinds = Dictionary(uniqueKeysWithValues: AdversarialCorpus.kinds.map { ($0, Kind(kind: $0)) })
        var tokens: [String: Token] = [:]
        var outputs: [String] = []
        var measurement = ScrubMeasurement(
            kinds: [], tokens: [], planted: 0, removed: 0, datesShiftedCorrectly: 0, dates: 0, cleanTokens: 0, cleanTokensAltered: 0,
            notes: corpus.notes.count, seconds: 0)
        let started = Date()
        var scrubbed: [String] = []
        scrubbed.reserveCapacity(corpus.notes.count)
        for note in corpus.notes { scrubbed.append(scrub(note.text, note.shiftDays)) }
        measurement.seconds = Date().timeIntervalSince(started)
        for (note, output) in zip(corpus.notes, scrubbed) {
            outputs.append(output)
            for (token, count) in typedTokens(output) {
                tokens[token, default: Token(token: token)].emitted += count
                if note.isClean { tokens[token, default: Token(token: token)].inCleanNotes += count }
            }
            let input = wordCounts(note.text)
            // Shifted dates and "90 or older" are the scrubber's own words: not counted as left.
            var remaining = output.replacingOccurrences(of: "90 or older", with: " ")
            for plant in note.plants { if let shifted = plant.shifted { remaining = remaining.replacingOccurrences(of: shifted, with: " ") } }
            let left = wordCounts(remaining)
            if note.isClean {
                for (word, count) in input {
                    measurement.cleanTokens += count
                    measurement.cleanTokensAltered += max(0, count - (left[word] ?? 0))
                }
                continue
            }
            var plantedWords: [String: Int] = [:]
            for plant in note.plants where plant.kind != "date" {
                for (word, count) in wordCounts(plant.text) where isChecked(word) { plantedWords[word, default: 0] += count }
            }
            for plant in note.plants {
                var removed: Bool
                if plant.kind == "date" {
                    removed = occurrences(of: plant.text, in: output) < occurrences(of: plant.text, in: note.text)
                    measurement.dates += 1
                    if let shifted = plant.shifted, output.contains(shifted) || output.contains("[DATE]") {
                        measurement.datesShiftedCorrectly += 1
                    }
                } else {
                    removed = wordCounts(plant.text).keys.filter(isChecked).allSatisfy { word in
                        (left[word] ?? 0) <= (input[word] ?? 0) - (plantedWords[word] ?? 0)
                    }
                }
                kinds[plant.kind, default: Kind(kind: plant.kind)].planted += 1
                measurement.planted += 1
                if removed {
                    kinds[plant.kind, default: Kind(kind: plant.kind)].removed += 1
                    measurement.removed += 1
                    if let token = tokenOfKind[plant.kind] { tokens[token, default: Token(token: token)].expected += 1 }
                }
                if plant.kind != "date", tokenOfKind[plant.kind] == nil, removed { tokens["NAME", default: Token(token: "NAME")].expected += 1 }
            }
        }
        measurement.kinds = AdversarialCorpus.kinds.compactMap { kinds[$0] }
        measurement.tokens = tokens.values.sorted { $0.token < $1.token }
        return (measurement, outputs)
    }

    /// Words of `text`, folded, with their counts.
    public static func wordCounts(_ text: String) -> [String: Int] {
        var result: [String: Int] = [:]
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: Locale(identifier: "en_US_POSIX"))
        var word = ""
        for c in folded {
            if c.isLetter || c.isNumber {
                word.append(c)
            } else if !word.isEmpty {
                result[word, default: 0] += 1
                word = ""
            }
        }
        if !word.isEmpty { result[word, default: 0] += 1 }
        return result
    }

    /// Whether a plant word is checked: 3+ characters, or 2+ digits (an age), and not a word of
    /// the template around it (`dot`, `at`, `com`, `street`…).
    static func isChecked(_ word: String) -> Bool {
        if genericWords.contains(word) { return false }
        if word.allSatisfy(\.isNumber) { return word.count >= 2 }
        return word.count >= 3
    }

    static let genericWords: Set<String> = [
        "dot", "com", "org", "net", "www", "http", "https", "example", "gmail", "outlook", "yahoo", "mail", "web", "orange", "street",
        "avenue", "road", "lane", "drive", "court", "close", "way", "ave", "apple", "watch", "diary", "flare", "log", "ext",
    ]

    static func occurrences(of needle: String, in text: String) -> Int {
        var count = 0
        var range = text.startIndex..<text.endIndex
        while let found = text.range(of: needle, options: [], range: range) {
            let before = found.lowerBound > text.startIndex ? text[text.index(before: found.lowerBound)] : " "
            let after = found.upperBound < text.endIndex ? text[found.upperBound] : " "
            if !(before.isLetter || before.isNumber), !(after.isNumber) { count += 1 }
            range = found.upperBound..<text.endIndex
        }
        return count
    }

    /// `[NAME]`, `[PHONE]`… in `text`, and `90 or older`, by name.
    static func typedTokens(_ text: String) -> [String: Int] {
        var result: [String: Int] = [:]
        for token in ScrubToken.allCases {
            let n = occurrences(of: token.text, in: text)
            if n > 0 { result[token.rawValue] = n }
        }
        return result
    }

    /// A table: per kind planted, removed, recall; per token emitted and precision; the totals
    /// and the targets.
    public func render() -> String {
        var lines = ["kind                 planted  removed   recall"]
        for k in kinds {
            lines.append(
                k.kind.padding(toLength: 20, withPad: " ", startingAt: 0) + String(format: " %7d  %7d  %6.2f%%", k.planted, k.removed, 100 * k.recall))
        }
        lines.append(String(format: "all                  %7d  %7d  %6.2f%%  (target ≥ 99.50%%)", planted, removed, 100 * recall))
        lines.append("")
        lines.append("token     emitted  in clean notes  precision (estimate)")
        for t in tokens {
            lines.append(t.token.padding(toLength: 9, withPad: " ", startingAt: 0) + String(format: " %7d  %14d  %6.2f%%", t.emitted, t.inCleanNotes, 100 * t.precision))
        }
        lines.append("")
        lines.append(
            String(
                format: "dates shifted to the expected text or [DATE]: %d of %d; clean notes: %.2f%% of %d words altered (target ≤ 2%%)",
                datesShiftedCorrectly, dates, 100 * cleanAltered, cleanTokens))
        lines.append(
            "leaks: full names \(leaks(["full_name", "lower_case", "middle_name", "line_break"])), emails \(leaks(["email", "obfuscated_email"])), "
                + "phones \(leaks(["phone"])), unshifted dates \(leaks(["date"])) (targets 0)")
        lines.append(String(format: "%d notes scrubbed in %.2f s", notes, seconds))
        return lines.joined(separator: "\n")
    }

    /// The corpus with cohort's output as JSON lines: one note a line with its participant, shift,
    /// text, plants and `cohort_output`, for the comparison with other scrubbers.
    public static func jsonLines(_ corpus: AdversarialCorpus, outputs: [String]) throws -> Data {
        struct Line: Encodable {
            var note: AdversarialCorpus.Note
            var output: String
            func encode(to encoder: any Encoder) throws {
                try note.encode(to: encoder)
                var container = encoder.container(keyedBy: Key.self)
                try container.encode(output, forKey: Key(stringValue: "cohort_output"))
                try container.encode(note.isClean, forKey: Key(stringValue: "clean"))
            }
        }
        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = Data()
        for (note, output) in zip(corpus.notes, outputs) {
            data += try encoder.encode(Line(note: note, output: output))
            data.append(0x0A)
        }
        return data
    }
}
