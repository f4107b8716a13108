import CohortDemo
import Foundation
import Testing

/// `../shared/deid-corpus` through the real pipeline — roster and consent import, data import,
/// `cohort export` with the shipped protocol (`medication_log.text: scrub`) — and scored on the
/// **published** files (`data/csv/symptom_logs.csv` notes, `medications.csv` text), as the corpus
/// README says. The export must succeed: a scan that refuses every export is no pass. In CI
/// (`CI=true`) a missing corpus is a failure, not a skip.
struct DeidCorpusExportCLITests {
    static let corpusDirectory = CLI.repoRoot.deletingLastPathComponent().appendingPathComponent("shared/deid-corpus")

    @Test func thePublishedExportMeetsTheTargets() throws {
        guard FileManager.default.fileExists(atPath: Self.corpusDirectory.appendingPathComponent("truth.json").path) else {
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("../shared/deid-corpus is missing") }
            return
        }
        let corpus = try ExternalCorpus(directory: Self.corpusDirectory)
        let cli = try CLI()
        defer { cli.cleanup() }
        let source = Self.corpusDirectory.path
        #expect(try cli.run(["init", "--protocol", "protocols/axspa-wearables.yaml", "-w", cli.workspace]).status == 0)
        let enrolled = try cli.ws("participant", "import", source + "/roster.csv", "--tokens", cli.path("tokens.csv"), "--quiet")
        #expect(enrolled.status == 0, "\(enrolled.output)")
        let consents = try String(contentsOfFile: source + "/consents.csv", encoding: .utf8)
        for row in CSVRows.parse(consents) where row.count == 3 {
            let r = try cli.ws(
                "consent", "record", "--participant", row[0], "--consent-version", "1.1", "--signed-at", row[1], "--signature", row[2],
                "--sharing", "broad", "--quiet")
            #expect(r.status == 0, "\(r.stderr)")
        }
        let imported = try cli.ws("data", "import", source + "/symptoms.csv", source + "/medications.csv")
        #expect(imported.status == 0, "\(imported.output)")
        // The shipped policy embargoes what is dated within max_days (182) of the export: the export
        // is dated 200 days from now, so every corpus note is old enough to publish under that policy.
        let exported = try cli.ws("export", "--recipient", "Lab A", "--out", cli.path("out"), "--no-archive", "--created-at", CLI.pastTheEmbargo)
        #expect(exported.status == 0, "the export must succeed: \(exported.output.prefix(2_000))")
        let bags = try FileManager.default.contentsOfDirectory(atPath: cli.path("out")).filter { !$0.hasPrefix(".") && !$0.hasSuffix(".csv") }
        let bag = try #require(bags.first, "no bag was published")
        let data = cli.path("out/\(bag)/data/csv")
        let published = try Self.publishedTexts(
            source: source, symptoms: try String(contentsOfFile: data + "/symptom_logs.csv", encoding: .utf8),
            medications: try String(contentsOfFile: data + "/medications.csv", encoding: .utf8))
        // A note of a participant left out (k-anonymity) is not published: nothing of it leaks.
        let score = ExternalCorpusScore.scorePublished(corpus) { text, code in published[code + "\u{1}" + text] }
        print(score.render(title: "published export of ../shared/deid-corpus"))
        #expect(published.count > 6_000)
        #expect(score.removed >= 0.995)
        #expect(score.fullNames == 0)
        #expect(score.emails == 0)
        #expect(score.phones == 0)
        #expect(score.unshiftedDates == 0)
        #expect(score.cleanDamage <= 0.02)
        #expect(score.medicationProbesPublished == 0)
    }

    /// Participant code + "\u{1}" + original text → the published text: each pseudonym is matched
    /// to the participant whose records have the same (kind, value) sequence in time order (a
    /// date shift keeps the order), then their rows are paired in that order.
    static func publishedTexts(source: String, symptoms: String, medications: String) throws -> [String: String] {
        struct Row {
            var start: Date
            var kind: String
            var value: String
            var text: String
        }
        let formatter = ISO8601DateFormatter()
        func rows(_ csv: String, owner: String, textColumn: String) -> [String: [Row]] {
            let table = CSVRows.parse(csv)
            guard let header = table.first, let o = header.firstIndex(of: owner), let s = header.firstIndex(of: "start"),
                let k = header.firstIndex(of: "kind"), let v = header.firstIndex(of: "value"), let t = header.firstIndex(of: textColumn)
            else { return [:] }
            var result: [String: [Row]] = [:]
            for row in table.dropFirst() where row.count == header.count {
                result[row[o], default: []].append(Row(start: formatter.date(from: row[s]) ?? .distantPast, kind: row[k], value: row[v], text: row[t]))
            }
            return result.mapValues { $0.sorted { $0.start < $1.start } }
        }
        let originalNotes = rows(try String(contentsOfFile: source + "/symptoms.csv", encoding: .utf8), owner: "participant", textColumn: "note")
        let publishedNotes = rows(symptoms, owner: "pseudonym", textColumn: "note")
        let originalMeds = rows(try String(contentsOfFile: source + "/medications.csv", encoding: .utf8), owner: "participant", textColumn: "text")
        let publishedMeds = rows(medications, owner: "pseudonym", textColumn: "text")
        // Values as numbers (`7.0` is published `7`).
        func signature(_ rows: [Row]) -> String { rows.map { "\($0.kind)=\(Double($0.value).map { "\($0)" } ?? $0.value)" }.joined(separator: ";") }
        var participantBySignature: [String: String] = [:]
        for (code, rows) in originalNotes { participantBySignature[signature(rows)] = code }
        var result: [String: String] = [:]
        for (pseudonym, rows) in publishedNotes {
            guard let code = participantBySignature[signature(rows)], let original = originalNotes[code] else { continue }
            for (a, b) in zip(original, rows) { result[code + "\u{1}" + a.text] = b.text }
            for (a, b) in zip(originalMeds[code] ?? [], publishedMeds[pseudonym] ?? []) { result[code + "\u{1}" + a.text] = b.text }
        }
        return result
    }
}
