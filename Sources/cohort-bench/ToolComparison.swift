import CohortCore
import CohortDemo
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Presidio (presidio-analyzer + spaCy's small English model) and scrubadub on the notes of one
/// ``ExternalCorpus``, each with and without the roster, scored by the same scorer as cohort
/// (``ExternalCorpusScore``): removed per kind, full names, clean damage, medication probes.
/// They run in `.venv-compare` (scripts/setup-compare-venv.sh) through
/// Tests/interop/compare_presidio_scrubadub.py, which only scrubs; when the venv is missing the
/// bench says so and measures nothing. `COHORT_COMPARE_VENV` names another venv folder.
enum ToolComparison {
    static let tools = ["presidio", "presidio+roster", "scrubadub", "scrubadub+roster"]

    struct Input: Encodable {
        struct RosterItem: Encodable {
            var text: String
            var kind: String
        }
        struct Note: Encodable {
            var id: Int
            var text: String
        }
        var roster: [RosterItem]
        var notes: [Note]
    }

    struct OutputLine: Decodable {
        var id: Int
        var tool: String
        var output: String
    }

    /// The roster values cohort's scrubber is built from, for the tools told the roster.
    static func rosterItems(_ participants: [Participant]) -> [Input.RosterItem] {
        var items: [Input.RosterItem] = []
        for p in participants {
            items.append(.init(text: p.code, kind: "code"))
            guard let identity = p.identity else { continue }
            items.append(.init(text: identity.name, kind: "name"))
            for part in identity.name.split(whereSeparator: { $0 == " " || $0 == "-" }) where part.count >= 2 {
                items.append(.init(text: String(part), kind: "name"))
            }
            let others: [(String?, String)] = [
                (identity.email, "email"), (identity.phone, "phone"), (identity.address, "address"), (identity.zip, "zip"), (identity.mrn, "mrn"),
            ]
            for (value, kind) in others { if let value, !value.isEmpty { items.append(.init(text: value, kind: kind)) } }
        }
        return items
    }

    static func run(name: String, corpus: ExternalCorpus, cohort: ExternalCorpusScore) throws {
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        guard let root = CohortBench.Scrub.sourceRoot(from: [cwd, BenchRunner.executable.deletingLastPathComponent()]) else {
            print("\nnot measured: Presidio and scrubadub on \(name) (run cohort-bench from the cohort source folder)")
            return
        }
        // COHORT_COMPARE_VENV: another venv folder (the tests point it at none to see the line below).
        let venv = ProcessInfo.processInfo.environment["COHORT_COMPARE_VENV"].map { URL(fileURLWithPath: $0) }
            ?? root.appendingPathComponent(".venv-compare")
        let python = venv.appendingPathComponent("bin/python")
        let script = root.appendingPathComponent("Tests/interop/compare_presidio_scrubadub.py")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            print("\nnot measured: Presidio and scrubadub on \(name): no .venv-compare, run scripts/setup-compare-venv.sh")
            return
        }
        var ids: [String: Int] = [:]
        var notes: [Input.Note] = []
        let texts = corpus.plants.map(\.note) + corpus.clean.map(\.note) + corpus.medicationProbes.map(\.text)
        for text in texts where ids[text] == nil {
            ids[text] = notes.count
            notes.append(.init(id: notes.count, text: text))
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-compare-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("input.json")
        let output = directory.appendingPathComponent("output.jsonl")
        try JSONEncoder().encode(Input(roster: rosterItems(corpus.participants), notes: notes)).write(to: input)
        fflush(nil)
        let process = Process()
        process.executableURL = python
        process.arguments = [script.path, input.path, output.path]
        try process.run()
        process.waitUntilExit()
        if process.terminationStatus == 3 {
            print("not measured: Presidio and scrubadub on \(name): run scripts/setup-compare-venv.sh")
            return
        }
        guard process.terminationStatus == 0, let data = FileManager.default.contents(atPath: output.path) else {
            print("not measured: Presidio and scrubadub on \(name): the comparison script failed (status \(process.terminationStatus))")
            return
        }
        var outputs: [String: [Int: String]] = [:]
        let decoder = JSONDecoder()
        for line in data.split(separator: 0x0A) where !line.isEmpty {
            let decoded = try decoder.decode(OutputLine.self, from: Data(line))
            outputs[decoded.tool, default: [:]][decoded.id] = decoded.output
        }
        var scores: [(String, ExternalCorpusScore)] = [("cohort", cohort)]
        for tool in tools {
            let map = outputs[tool] ?? [:]
            scores.append((tool, ExternalCorpusScore.score(corpus) { text, _ in ids[text].flatMap { map[$0] } ?? text }))
        }
        print(render(name: name, scores: scores))
    }

    /// Removed per kind for every tool side by side, then the totals, full names, clean damage and probes.
    static func render(name: String, scores: [(String, ExternalCorpusScore)]) -> String {
        func cell(_ text: String) -> String { String(repeating: " ", count: max(0, 17 - text.count)) + text }
        var lines = ["", "removed per kind on \(name): cohort, Presidio and scrubadub (same notes, same scorer)"]
        lines.append("kind".padding(toLength: 14, withPad: " ", startingAt: 0) + "planted" + scores.map { cell($0.0) }.joined())
        let kinds = Set(scores.flatMap { $0.1.kinds.keys }).sorted()
        for kind in kinds {
            let planted = scores[0].1.kinds[kind]?.planted ?? 0
            lines.append(
                kind.padding(toLength: 14, withPad: " ", startingAt: 0) + String(format: "%7d", planted)
                    + scores.map { cell(String(format: "%.2f%%", 100 * ($0.1.kinds[kind]?.removed ?? 1))) }.joined())
        }
        lines.append(
            "all".padding(toLength: 14, withPad: " ", startingAt: 0) + String(format: "%7d", scores[0].1.planted)
                + scores.map { cell(String(format: "%.2f%%", 100 * $0.1.removed)) }.joined())
        lines.append("full names".padding(toLength: 21, withPad: " ", startingAt: 0) + scores.map { cell("\($0.1.fullNames)") }.joined())
        lines.append(
            "clean damage".padding(toLength: 21, withPad: " ", startingAt: 0) + scores.map { cell(String(format: "%.2f%%", 100 * $0.1.cleanDamage)) }.joined())
        lines.append(
            "med. probes kept".padding(toLength: 21, withPad: " ", startingAt: 0)
                + scores.map { cell("\($0.1.medicationProbesPublished)/\($0.1.medicationProbes)") }.joined())
        return lines.joined(separator: "\n")
    }
}
