import ArgumentParser
import CohortCore
import CohortKit
import Foundation

#if canImport(Glibc)
import Glibc
import CohortDemo
#endif

extension CohortBench {
    /// `cohort-bench scrub`: the free-text scrubber on the adversarial corpus — recall per
    /// identifier kind, precision per token, clean-note damage — and, when `.venv` has it,
    /// scrubadub on the same notes.
    struct Scrub: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "scrub",
            abstract: "Measure the free-text scrubber on its corpora, next to Presidio and scrubadub when their venvs exist.",
            discussion: """
                Generates the deterministic adversarial corpus (participants with hard names, notes that plant \
                identifiers in every form, clean clinical notes), scrubs every note with the participant's date \
                shift, and prints per identifier kind how many plants were fully removed (checked by folded \
                word counts against the ground truth, not by the scrubber's matcher), per token a precision \
                estimate, the share of clean-note words altered, and the targets. With .venv (scripts/setup-venv.sh) \
                the same notes go through scrubadub 2.0.1 (Tests/interop/compare_scrubadub.py); scrubadub \
                does not know the roster, cohort does.

                --corpus DIR, --template-corpus and --held-out-forms add corpora in the answer-key form of \
                ../shared/deid-corpus, each scored per kind and per form (the held-out forms also as "published":
                leaked by the scrubber and not flagged by the residual scan). With .venv-compare \
                (scripts/setup-compare-venv.sh) the same notes go through Presidio (spaCy's small English model) \
                and scrubadub, each with and without the roster, scored by the same scorer; without it the bench \
                prints "not measured: ...". --no-compare skips both comparisons.

                Examples:
                  swift run -c release cohort-bench scrub
                  swift run -c release cohort-bench scrub --notes 200 \\
                    --corpus ../shared/deid-corpus --template-corpus --held-out-forms
                """)

        @Option(help: "Seed for the corpus.") var seed: UInt64 = 13
        @Option(help: "Participants.") var participants: Int = 220
        @Option(help: "Notes with planted identifiers.") var notes: Int = 5_000
        @Option(help: "Clean notes.") var cleanNotes: Int = 1_200
        @Option(help: "Also write the corpus with cohort's output as JSON lines to this file.") var writeCorpus: String?
        @Flag(help: "Skip the scrubadub and Presidio comparisons.") var noCompare = false
        @Flag(help: "Print JSON instead of tables.") var json = false
        @Option(help: "Also score an external corpus folder (roster.csv + truth.json, e.g. ../shared/deid-corpus) as its README says.")
        var corpus: String?
        @Flag(help: "Also score the template corpus (messages in real-world styles).") var templateCorpus = false
        @Flag(help: "Also measure the held-out forms (identifier forms composed from roster values): leaked and published per form.")
        var heldOutForms = false

        func validate() throws {
            guard (1...20_000).contains(participants) else { throw ValidationError("--participants must be between 1 and 20000") }
            guard (0...1_000_000).contains(notes), (0...1_000_000).contains(cleanNotes) else {
                throw ValidationError("--notes and --clean-notes must be between 0 and 1000000")
            }
        }

        func run() throws {
            let corpus = AdversarialCorpus(seed: seed, participantCount: participants, plantNotes: notes, cleanNotes: cleanNotes)
            let (measurement, outputs) = try ScrubMeasurement.measureCohortScrubber(corpus)
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(measurement), as: UTF8.self))
            } else {
                print("cohort scrubber on the adversarial corpus (seed \(seed), \(corpus.participants.count) participants, \(corpus.notes.count) notes)")
                print(measurement.render())
            }
            try scoreOtherCorpora()
            let lines = try ScrubMeasurement.jsonLines(corpus, outputs: outputs)
            if let writeCorpus { try lines.write(to: URL(fileURLWithPath: writeCorpus)) }
            guard !noCompare, !json else { return }
            try compare(lines)
        }

        /// The medication words the shipped protocols list (their `medication_codes`), kept as an export keeps them.
        static let medicationWords = ["naproxen", "ibuprofen", "celecoxib", "adalimumab", "etanercept", "sumatriptan", "topiramate"]

        /// Recall per kind and per form, clean damage and medication probes on `--corpus`, the
        /// template corpus and the held-out forms; then Presidio and scrubadub on the same notes.
        func scoreOtherCorpora() throws {
            var corpora: [(String, ExternalCorpus)] = []
            if let path = self.corpus { corpora.append((path, try ExternalCorpus(directory: URL(fileURLWithPath: path)))) }
            if templateCorpus { corpora.append(("the template corpus", TemplateCorpus.make())) }
            if heldOutForms { corpora.append(("the held-out forms", HeldOutForms.make())) }
            for (name, corpus) in corpora {
                let score = try ExternalCorpusScore.scoreCohortScrubber(corpus, vocabulary: Self.medicationWords)
                print("\n" + score.render(title: "cohort scrubber on \(name) (\(corpus.participants.count) participants, \(corpus.plants.count) plants)"))
                if name == "the held-out forms" {
                    let m = try HeldOutForms.measure(corpus, keeping: Self.medicationWords)
                    print("\n" + m.render(title: "held-out forms through the scrubber and the residual scan"))
                }
                if !noCompare, !json { try ToolComparison.run(name: name, corpus: corpus, cohort: score) }
            }
        }

        /// The cohort source folder (holding Tests/interop/compare_scrubadub.py) at or above one of `starts`.
        static func sourceRoot(from starts: [URL]) -> URL? {
            for start in starts {
                var url = start.standardizedFileURL
                for _ in 0..<8 {
                    if FileManager.default.fileExists(atPath: url.appendingPathComponent("Tests/interop/compare_scrubadub.py").path) { return url }
                    let parent = url.deletingLastPathComponent()
                    if parent.path == url.path { break }
                    url = parent
                }
            }
            return nil
        }

        /// Runs Tests/interop/compare_scrubadub.py on the corpus when `.venv` exists.
        func compare(_ lines: Data) throws {
            let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            guard let root = Self.sourceRoot(from: [cwd, BenchRunner.executable.deletingLastPathComponent()]) else {
                print("\nscrubadub comparison skipped: run cohort-bench from the cohort source folder")
                return
            }
            let python = root.appendingPathComponent(".venv/bin/python")
            let script = root.appendingPathComponent("Tests/interop/compare_scrubadub.py")
            guard FileManager.default.isExecutableFile(atPath: python.path) else {
                print("\nscrubadub comparison skipped: no .venv (run scripts/setup-venv.sh)")
                return
            }
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-scrub-corpus-\(getpid()).jsonl")
            try lines.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            fflush(nil)  // cohort's table first, then the script's (nil: every output stream)
            let process = Process()
            process.executableURL = python
            process.arguments = [script.path, file.path]
            try process.run()
            process.waitUntilExit()
            if process.terminationStatus != 0 { throw ExitCode(1) }
        }
    }
}
