import CohortCore
import CohortCrypto
import CohortKit
import CohortStore
import Foundation
import Testing

/// `RecordImporter.threads`: rows validated on one thread or several give the same store, the
/// same rejects file and the same first error.
struct RecordImporterThreadsTests {
    static let header = "participant,kind,start,end,value,unit,text,source,note\n"

    /// Row `n` of a CSV file long enough to fill many chunks (256 rows) on every validator:
    /// both consented participants, notes (some quoted over two lines), a duplicate every 50 rows,
    /// and, with `bad`, rows the validator refuses: an unreadable value every 301, a participant
    /// without consent every 401.
    static func csvRow(_ n: Int, bad: Bool) -> String {
        let minute = n % 50 == 49 ? n - 1 : n  // the same record as the row before
        let code = minute % 3 == 0 ? "P-0002" : "P-0001"
        let start = "2026-10-\(String(format: "%02d", 2 + minute / 1_440))T\(String(format: "%02d", minute / 60 % 24)):\(String(format: "%02d", minute % 60)):00"
        let note = n % 97 == 0 ? "\"felt \"\"odd\"\",\nthen fine\"" : n % 89 == 0 ? "after coffee" : ""
        if bad, n % 301 == 300 { return "\(code),heart_rate,\(start),,fast,,,watch,\n" }
        if bad, n % 401 == 400 { return "P-0003,heart_rate,\(start),,70,,,watch,\n" }
        return "\(code),heart_rate,\(start),,\(60 + n % 40),/min,,watch,\(note)\n"
    }

    /// The NDJSON line of row `n`: escapes (the general JSON path) every 7, a bad value every 233.
    static func ndjsonLine(_ n: Int, bad: Bool) -> String {
        let start = "2026-10-\(String(format: "%02d", 2 + n / 1_440))T\(String(format: "%02d", n / 60 % 24)):\(String(format: "%02d", n % 60)):00"
        let value = bad && n % 233 == 232 ? "\"x\"" : String(1_000 + n)
        let note = n % 7 == 0 ? ",\"note\":\"said \\\"hi\\\"\"" : ""
        return "{\"participant\":\"P-0001\",\"kind\":\"steps\",\"start\":\"\(start)\",\"value\":\(value),\"source\":\"phone\"\(note)}\n"
    }

    /// Everything a store holds of its records after importing `files` with `threads`:
    /// per file the result, the rejects file's bytes, then every participant's records (notes
    /// decrypted) in the store's order.
    static func imported(_ files: [(String, String)], threads: Int) throws -> (results: [[Int]], rejects: [Data], records: [String: [Record]]) {
        let f = try ImportFixture()
        defer { f.cleanup() }
        var results: [[Int]] = []
        var rejects: [Data] = []
        for (name, text) in files {
            let rejectsURL = f.directory.appendingPathComponent("rejects-\(name).csv")
            let result = try RecordImporter(workspace: f.workspace, threads: threads).importFile(try f.write(name, text), rejectsURL: rejectsURL)
            results.append([result.rows, result.inserted, result.duplicates, result.rejected])
            rejects.append(try Data(contentsOf: rejectsURL))
        }
        // The file's digest is hashed beside the import: the audit trail names each file's own.
        let digests = try f.workspace.store.auditEvents(action: "data.import").map { $0.details["file_sha256"] }
        #expect(digests == files.map { SHA256.hex(Data($0.1.utf8)) })
        var records: [String: [Record]] = [:]
        // Each fixture enrolls its participants under new internal ids: compare the rest.
        for code in ["P-0001", "P-0002", "P-0003"] {
            records[code] = try f.records(code).map { record in
                var record = record
                record.participantID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
                return record
            }
        }
        return (results, rejects, records)
    }

    /// The error importing `text` as `name` with `threads` throws, and whether the store stayed empty.
    static func failure(_ name: String, _ text: String, threads: Int) throws -> (CohortError, Bool) {
        let f = try ImportFixture()
        defer { f.cleanup() }
        do {
            _ = try RecordImporter(workspace: f.workspace, threads: threads).importFile(try f.write(name, text))
        } catch let error as CohortError {
            return (error, try f.recordCount() == 0 && f.batchCount() == 0)
        }
        Issue.record("\(name) imported")
        return (CohortError(.system, "imported"), false)
    }

    @Test func oneThreadAndThreeStoreTheSameRecordsAndRejects() throws {
        let rows = 3_000
        let csv = Self.header + (0..<rows).map { Self.csvRow($0, bad: true) }.joined()
        let ndjson = (0..<2_000).map { Self.ndjsonLine($0, bad: true) }.joined()
        let files = [("rows.csv", csv), ("rows.ndjson", ndjson)]
        let one = try Self.imported(files, threads: 1)
        let three = try Self.imported(files, threads: 3)
        #expect(one.results == three.results)
        #expect(one.rejects == three.rejects)
        for code in ["P-0001", "P-0002", "P-0003"] {
            let a = one.records[code] ?? []
            let b = three.records[code] ?? []
            #expect(a.count == b.count, "\(code)")
            for (i, (x, y)) in zip(a, b).enumerated() where x != y { Issue.record("\(code) record \(i) differs") }
        }
        // The counts, recomputed from how the rows were made.
        let refused = (0..<rows).filter { $0 % 301 == 300 || $0 % 401 == 400 }
        let duplicates = (0..<rows).filter { $0 % 50 == 49 && !refused.contains($0) && !refused.contains($0 - 1) }.count
        #expect(one.results[0] == [rows, rows - refused.count - duplicates, duplicates, refused.count])
        let badSteps = (0..<2_000).filter { $0 % 233 == 232 }.count
        #expect(one.results[1] == [2_000, 2_000 - badSteps, 0, badSteps])
        #expect(one.records["P-0003"]?.isEmpty == true)
        #expect(one.records["P-0001"]?.contains { $0.note == "felt \"odd\",\nthen fine" } == true)
        #expect(one.records["P-0001"]?.contains { $0.note == "said \"hi\"" } == true)
    }

    @Test(arguments: [
        // A refused value deep in the file (chunk 9 of 3 validators), then one further on.
        ("late.csv", 2_500, "value"),
        // A quote inside an unquoted field: a reading error, after rows already validated.
        ("quote.csv", 1_900, nil),
        // An NDJSON line that is not JSON.
        ("late.ndjson", 1_700, nil),
    ] as [(String, Int, String?)])
    func theFirstErrorIsTheSameForAnyThreadCount(name: String, badRow: Int, field: String?) throws {
        var text = name.hasSuffix(".csv") ? Self.header : ""
        for n in 0..<3_000 {
            if n == badRow || n == badRow + 300 {
                text += name == "late.csv" ? "P-0001,heart_rate,2026-10-05T00:00:00,,fast,,,watch,\n"
                    : name == "quote.csv" ? "P-0001,heart_rate,2026-10-05T00:00:00,,7\"0,,,watch,\n" : "{\"participant\":\n"
            } else {
                text += name.hasSuffix(".csv") ? Self.csvRow(n, bad: false) : Self.ndjsonLine(n, bad: false)
            }
        }
        let (one, oneEmpty) = try Self.failure(name, text, threads: 1)
        let (three, threeEmpty) = try Self.failure(name, text, threads: 3)
        #expect(oneEmpty && threeEmpty)
        #expect(one.message == three.message)
        // Each fixture has its own folder: compare the file's name, line and field.
        #expect(one.location?.file.map { URL(fileURLWithPath: $0).lastPathComponent } == name)
        #expect(three.location?.file.map { URL(fileURLWithPath: $0).lastPathComponent } == name)
        #expect(one.location?.line == three.location?.line && one.location?.field == three.location?.field)
        // The bad row's line: after the header (CSV), and after the quoted notes' extra lines.
        let extraLines = name.hasSuffix(".csv") ? 1 + (0..<badRow).filter { $0 % 97 == 0 }.count : 0
        #expect(one.location?.line == badRow + 1 + extraLines, "\(one)")
        #expect(one.location?.field == field)
    }
}
