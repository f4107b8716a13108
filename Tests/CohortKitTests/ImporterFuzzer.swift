import CohortCore
import CohortKit
import CohortStore
import Foundation
import Testing

/// Mutates valid roster CSV and record CSV / NDJSON / JSON files and imports each mutant into one
/// workspace, asserting for every case: no crash; either accepted, or a `CohortError` whose text
/// (message, location, hint, cause) holds none of the identifier or record values planted in the
/// input; and all or nothing — on an error no participant, record, import batch or audit event
/// was added.
///
/// Run `scripts/fuzz-importers.sh [cases] [seed]` for a long run; the test suite runs 300 cases.
struct ImporterFuzzer {
    /// Identifier and record values planted in every input, and distinctive pieces of them (a
    /// mutation may cut a value; a piece must not surface either). Compared case-insensitively.
    static let planted = [
        "Quinlan", "Fuzzworthy", "quinlan.fuzzworthy@fuzzmail.test", "fuzzmail.test", "617 555 0142", "555 0142", "42 Fuzzmoor Lane",
        "Fuzzmoor", "MRN-FZ-99317", "FZ-99317", "Fuzzband", "Fuzzoprofen",
    ]

    /// What was done to a valid input.
    enum Mutation: String, CaseIterable {
        case byteFlip, truncate, hugeField, badUTF8, strayQuote, byteOrderMark, lineEnds, deepNesting, duplicateColumn,
            dropHeader, duplicateLine, deleteChunk, nulBytes, plantedInHeader, emptyFile
    }

    enum Input: String, CaseIterable {
        case roster = "csv"
        case recordsCSV = "records.csv"
        case ndjson = "ndjson"
        case json = "json"
    }

    struct Outcome {
        var tried = 0
        var held = 0
        var accepted = 0
        var refused = 0
        var byMutation: [Mutation: Int] = [:]
        var failures: [String] = []
    }

    let fixture: ImportFixture
    var random: SeededRandom

    init(seed: UInt64) throws {
        fixture = try ImportFixture()
        random = SeededRandom(seed: seed)
    }

    // MARK: - Valid inputs

    func roster(case n: Int) -> String {
        var text = "code,name,email,phone,birth_date,sex,address,zip,mrn,time_zone,enrolled_on,devices\n"
        for i in 1...3 {
            text += "F\(n)-\(i),Quinlan Fuzzworthy,quinlan.fuzzworthy@fuzzmail.test,+1 617 555 0142,1971-05-0\(i),female,"
                + "\"42 Fuzzmoor Lane, Apt \(i)\",02139,MRN-FZ-99317\(i),Europe/Berlin,2026-09-01,Quinlan's Fuzzband\n"
        }
        return text
    }

    struct Row {
        var kind: String
        var start: String
        var value: String
        var text: String
    }

    static let rows = [
        Row(kind: "pain", start: "2026-10-02T08:00:00", value: "4", text: ""),
        Row(kind: "heart_rate", start: "2026-10-02T09:00:00+02:00", value: "71", text: ""),
        Row(kind: "medication_dose", start: "2026-10-03T08:00:00Z", value: "50", text: "Fuzzoprofen"),
        Row(kind: "fatigue", start: "2026-10-04T20:00:00", value: "6", text: ""),
    ]

    func recordsCSV(case n: Int) -> String {
        var text = "participant,kind,start,end,value,unit,text,source,note\n"
        for (i, row) in Self.rows.enumerated() {
            text += "P-000\(i % 2 + 1),\(row.kind),\(row.start),,\(row.value),,\(row.text),Quinlan's Fuzzband,\"Quinlan Fuzzworthy, case \(n), 617 555 0142\"\n"
        }
        return text
    }

    func ndjsonLines(case n: Int) -> [String] {
        Self.rows.enumerated().map { i, row in
            "{\"participant\":\"P-000\(i % 2 + 1)\",\"kind\":\"\(row.kind)\",\"start\":\"\(row.start)\",\"value\":\(row.value),"
                + (row.text.isEmpty ? "" : "\"text\":\"\(row.text)\",")
                + "\"source\":\"Quinlan's Fuzzband\",\"note\":\"Quinlan Fuzzworthy wrote from quinlan.fuzzworthy@fuzzmail.test (case \(n))\"}"
        }
    }

    func valid(_ input: Input, case n: Int) -> String {
        switch input {
        case .roster: roster(case: n)
        case .recordsCSV: recordsCSV(case: n)
        case .ndjson: ndjsonLines(case: n).joined(separator: "\n") + "\n"
        case .json: "[\n" + ndjsonLines(case: n).joined(separator: ",\n") + "\n]\n"
        }
    }

    // MARK: - Mutations

    mutating func position(in bytes: [UInt8]) -> Int { bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count + 1)) }

    mutating func mutate(_ input: [UInt8], with mutation: Mutation) -> [UInt8] {
        var bytes = input
        switch mutation {
        case .byteFlip:
            for _ in 0..<(1 + Int(random.next() % 4)) where !bytes.isEmpty {
                let i = Int(random.next() % UInt64(bytes.count))
                bytes[i] ^= UInt8(1 << (random.next() % 8))
            }
        case .truncate:
            bytes = Array(bytes.prefix(position(in: bytes)))
        case .hugeField:
            let sizes = [70_000, 1_100_000, 3_000_000]
            let filler = random.pick(["A", "Quinlan Fuzzworthy ", "\"", ",", "é", "{"])
            let huge = Array(String(repeating: filler, count: random.pick(sizes) / filler.utf8.count).utf8)
            bytes.insert(contentsOf: huge, at: position(in: bytes))
        case .badUTF8:
            let bad: [[UInt8]] = [[0xFF], [0xC3, 0x28], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xC0, 0xAF]]
            for _ in 0..<(1 + Int(random.next() % 3)) { bytes.insert(contentsOf: random.pick(bad), at: position(in: bytes)) }
        case .strayQuote:
            for _ in 0..<(1 + Int(random.next() % 3)) { bytes.insert(0x22, at: position(in: bytes)) }
        case .byteOrderMark:
            let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
            bytes = random.next() % 2 == 0 ? bom + bytes : bom + bom + bytes
        case .lineEnds:
            let style = random.next() % 3
            var out: [UInt8] = []
            for byte in bytes {
                if byte == 0x0A {
                    out += style == 0 ? [0x0D, 0x0A] : style == 1 ? [0x0D] : [0x0A, 0x0A, 0x0D, 0x0A]
                } else {
                    out.append(byte)
                }
            }
            bytes = out
        case .deepNesting:
            let depth = random.pick([600, 5_000, 200_000])
            let nested = Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8)
            if let colon = bytes.firstIndex(of: 0x3A) {
                bytes.insert(contentsOf: nested + [0x2C], at: colon + 1)
            } else {
                bytes.insert(contentsOf: nested, at: position(in: bytes))
            }
        case .duplicateColumn:
            // Repeat the first line's (or object's) first column: a header named twice, or a JSON key twice.
            if let comma = bytes.firstIndex(of: 0x2C) {
                let head = Array(bytes[0..<comma])
                if let brace = head.firstIndex(of: 0x7B) {
                    bytes.insert(contentsOf: Array(head[(brace + 1)...]) + Array(":\"Quinlan Fuzzworthy\",".utf8), at: brace + 1)
                } else {
                    var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
                    lines = lines.map { line in
                        guard let c = line.firstIndex(of: 0x2C) else { return line }
                        return Array(line[0..<c]) + [0x2C] + line
                    }
                    bytes = Array(lines.joined(separator: [0x0A]))
                }
            }
        case .dropHeader:
            if let newline = bytes.firstIndex(of: 0x0A) { bytes.removeSubrange(0...newline) }
        case .duplicateLine:
            let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
            if lines.count > 1 {
                let i = Int(random.next() % UInt64(lines.count))
                var copy = lines
                copy.insert(lines[i], at: Int(random.next() % UInt64(lines.count)))
                bytes = Array(copy.joined(separator: [0x0A]))
            }
        case .deleteChunk:
            let start = position(in: bytes)
            let end = min(bytes.count, start + 1 + Int(random.next() % 40))
            if start < end { bytes.removeSubrange(start..<end) }
        case .nulBytes:
            for _ in 0..<(1 + Int(random.next() % 3)) { bytes.insert(0x00, at: position(in: bytes)) }
        case .plantedInHeader:
            // A value where the header should be: the header's line end lost, or a value as a column.
            if let newline = bytes.firstIndex(of: 0x0A) {
                if random.next() % 2 == 0 {
                    bytes.remove(at: newline)
                } else {
                    bytes.insert(contentsOf: Array(",quinlan,fuzzworthy".utf8), at: newline)
                }
            }
        case .emptyFile:
            bytes = random.next() % 2 == 0 ? [] : Array(bytes.prefix(while: { $0 != 0x0A })) + [0x0A]
        }
        return bytes
    }

    // MARK: - Running

    /// Counts that an import may change only when it succeeds.
    func snapshot() throws -> [String: Int] {
        var counts = try fixture.workspace.store.counts()
        counts["audit_events"] = try fixture.workspace.store.auditEvents().count
        return counts
    }

    /// Imports one mutant and checks the properties; returns a failure description or nil.
    func check(_ bytes: [UInt8], as input: Input, name: String) throws -> (failure: String?, accepted: Bool) {
        let url = fixture.directory.appendingPathComponent(name + "." + input.rawValue)
        try Data(bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let before = try snapshot()
        do {
            switch input {
            case .roster: _ = try Roster(workspace: fixture.workspace).importCSV(url)
            default: _ = try fixture.importFile(url)
            }
            return (nil, true)
        } catch let error as CohortError {
            let text = error.description + " " + (error.location?.field ?? "")
            let lowered = text.lowercased()
            if let leaked = Self.planted.first(where: { lowered.contains($0.lowercased()) }) {
                return ("error text holds the planted value '\(leaked)': \(text.prefix(300))", false)
            }
            let after = try snapshot()
            if after != before {
                return ("refused but changed the store: \(before) → \(after)", false)
            }
            return (nil, false)
        } catch {
            return ("threw \(type(of: error)) instead of a CohortError", false)
        }
    }

    /// Runs `cases` mutants, cycling through the inputs, 1–3 mutations each.
    mutating func run(cases: Int) throws -> Outcome {
        var outcome = Outcome()
        for n in 0..<cases {
            let input = Input.allCases[n % Input.allCases.count]
            var bytes = Array(valid(input, case: n).utf8)
            var applied: [Mutation] = []
            for _ in 0..<(1 + Int(random.next() % 3)) {
                let mutation = random.pick(Mutation.allCases)
                applied.append(mutation)
                bytes = mutate(bytes, with: mutation)
            }
            outcome.tried += 1
            for mutation in applied { outcome.byMutation[mutation, default: 0] += 1 }
            let (failure, accepted) = try check(bytes, as: input, name: "case-\(n)")
            if let failure {
                outcome.failures.append("case \(n) (\(input.rawValue), \(applied.map(\.rawValue).joined(separator: "+"))): \(failure)")
            } else {
                outcome.held += 1
                if accepted { outcome.accepted += 1 } else { outcome.refused += 1 }
            }
        }
        return outcome
    }
}

struct ImporterFuzzerTests {
    /// 300 cases in the normal suite; `COHORT_FUZZ_CASES` / `COHORT_FUZZ_SEED` (see
    /// `scripts/fuzz-importers.sh`) for a long run.
    @Test func mutatedImportFilesNeverCrashLeakOrHalfImport() throws {
        let environment = ProcessInfo.processInfo.environment
        let cases = environment["COHORT_FUZZ_CASES"].flatMap(Int.init) ?? 300
        let seed = environment["COHORT_FUZZ_SEED"].flatMap(UInt64.init) ?? 1
        var fuzzer = try ImporterFuzzer(seed: seed)
        defer { fuzzer.fixture.cleanup() }
        let outcome = try fuzzer.run(cases: cases)
        let mix = ImporterFuzzer.Mutation.allCases.map { "\($0.rawValue) \(outcome.byMutation[$0] ?? 0)" }.joined(separator: ", ")
        print("importer fuzz (seed \(seed)): \(outcome.tried) cases tried, \(outcome.held) held (\(outcome.accepted) accepted, \(outcome.refused) refused cleanly); mutations: \(mix)")
        for failure in outcome.failures.prefix(20) { Issue.record(Comment(rawValue: failure)) }
        #expect(outcome.tried == cases)
        #expect(outcome.held == outcome.tried)
        // The mutants must exercise both outcomes, or the run proves little.
        #expect(outcome.refused > cases / 4 && outcome.accepted > 0)
        #expect(outcome.byMutation.count == ImporterFuzzer.Mutation.allCases.count)
    }

    @Test func unmutatedInputsAreAcceptedSoRefusalsComeFromTheMutations() throws {
        let fuzzer = try ImporterFuzzer(seed: 1)
        defer { fuzzer.fixture.cleanup() }
        for input in ImporterFuzzer.Input.allCases {
            let (failure, accepted) = try fuzzer.check(Array(fuzzer.valid(input, case: 0).utf8), as: input, name: "valid")
            #expect(failure == nil && accepted, "\(input): \(failure ?? "refused")")
        }
    }
}
