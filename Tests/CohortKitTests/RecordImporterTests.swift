import CohortCore
import CohortKit
import CohortStore
import Foundation
import Testing

/// A workspace on the AxSpA protocol with three participants: P-0001 (Europe/Berlin) and
/// P-0002 (America/New_York) consented, P-0003 (Europe/Berlin) without consent. All enrolled
/// on 2026-09-01; "now" is 2026-11-20T12:00:00Z.
struct ImportFixture {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let now = Date(timeIntervalSince1970: 1_795_176_000)  // 2026-11-20T12:00:00Z

    let directory: URL
    let workspace: Workspace

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("import-\(UUID().uuidString)")
        workspace = try Workspace.create(
            at: directory.appendingPathComponent("ws"), protocolURL: Self.repositoryRoot.appendingPathComponent("protocols/axspa-wearables.yaml"),
            actor: "test", now: { Self.now })
        _ = try Roster(workspace: workspace).enroll(
            [
                (RosterEntry(code: "P-0001", name: "Ann Test", timeZone: "Europe/Berlin", enrolledOn: "2026-09-01"), line: nil),
                (RosterEntry(code: "P-0002", name: "Bo Test", timeZone: "America/New_York", enrolledOn: "2026-09-01"), line: nil),
                (RosterEntry(code: "P-0003", name: "Cy Test", timeZone: "Europe/Berlin", enrolledOn: "2026-09-01"), line: nil),
            ], file: nil, source: "test")
        let signed = Timestamp(epochMilliseconds: 1_788_285_600_000)  // 2026-09-01T18:00:00Z
        for code in ["P-0001", "P-0002"] {
            _ = try ConsentService(workspace: workspace).record(code: code, version: "1.1", signedAt: signed, signature: "typed:Test", sharing: .broad)
        }
    }

    func cleanup() { try? FileManager.default.removeItem(at: directory) }

    func write(_ name: String, _ text: String) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url
    }

    func importFile(_ url: URL, rejects: URL? = nil) throws -> ImportFileResult {
        try RecordImporter(workspace: workspace).importFile(url, rejectsURL: rejects)
    }

    func records(_ code: String) throws -> [Record] {
        guard let stored = try workspace.store.participant(code: code) else { return [] }
        var result: [Record] = []
        try workspace.store.forEachRecord(stored.handle, participantID: stored.participant.id) { result.append($0) }
        return result
    }

    func recordCount() throws -> Int { try workspace.store.recordCount() }
    func batchCount() throws -> Int { try workspace.store.counts()["import_batches"] ?? 0 }

    /// The error importing `text` as `name` throws (nil when it imports).
    func importError(_ name: String, _ text: String) throws -> CohortError? {
        do {
            _ = try importFile(try write(name, text))
            return nil
        } catch let error as CohortError {
            return error
        }
    }
}

struct RecordImporterTests {
    static let header = "participant,kind,start,end,value,unit,text,source,note\n"

    @Test func csvRowsAreStoredWithCanonicalUnitsAndLocalOffsets() throws {
        let f = try ImportFixture()
        defer { f.cleanup() }
        let csv = Self.header
            + "P-0001,heart_rate,2026-10-02T08:30:00,,72,{beats}/min,,watch,\"stiff, \"\"tired\"\"\nsecond line\"\n"
            + "P-0001,morning_stiffness,2026-10-02T07:00:00Z,,1.5,h,,,\n"
            + "\n"
            + "P-0002,sleep_duration,2026-10-01T23:00:00-04:00,2026-10-02T07:00:00-04:00,480,min,,,\n"
            + "P-0001,medication_dose,2026-10-03 09:15,,0.05,g,Ibuprofen,,\n"
        let result = try f.importFile(try f.write("r.csv", csv))
        #expect(result.rows == 4 && result.inserted == 4 && result.duplicates == 0 && result.rejected == 0)
        #expect(result.format == "csv")
        let p1 = try f.records("P-0001")
        #expect(p1.count == 3)
        let hr = try #require(p1.first { $0.kind == .heartRate })
        #expect(hr.start == Timestamp(epochMilliseconds: 1_790_922_600_000, utcOffsetSeconds: 7200))  // 06:30Z, CEST
        #expect(hr.value == 72 && hr.source == "watch" && hr.note == "stiff, \"tired\"\nsecond line")
        #expect(p1.first { $0.kind == .morningStiffness }?.value == 90)
        let dose = try #require(p1.first { $0.kind == .medicationDose })
        #expect(dose.value == 50 && dose.text == "Ibuprofen" && dose.start.iso8601 == "2026-10-03T09:15:00+02:00")
        let sleep = try #require(try f.records("P-0002").first)
        #expect(sleep.value == 8 && sleep.end?.iso8601 == "2026-10-02T07:00:00-04:00")
    }

    @Test func reimportCountsDuplicatesBySourceAndStoresNothingNew() throws {
        let f = try ImportFixture()
        defer { f.cleanup() }
        let csv = Self.header + "P-0001,heart_rate,2026-10-02T08:30:00,,72,,,watch,\nP-0001,heart_rate,2026-10-02T08:30:00,,73,,,ring,\n"
        let url = try f.write("r.csv", csv)
        #expect(try f.importFile(url).inserted == 2)
        let again = try f.importFile(url)
        #expect(again.inserted == 0 && again.duplicates == 2 && again.rows == 2)
        #expect(try f.recordCount() == 2)
        // Within one file too: the second identical row is a duplicate.
        let within = try f.importFile(try f.write("d.csv", Self.header + "P-0002,pain,2026-10-02T08:00:00,,4,,,,\nP-0002,pain,2026-10-02T08:00:00,,5,,,,\n"))
        #expect(within.inserted == 1 && within.duplicates == 1)
    }

    @Test func wallClockTimesInTheFallBackOverlapTakeTheEarlierInstant() throws {
        let f = try ImportFixture()
        defer { f.cleanup() }
        let csv = "participant,kind,start,value\nP-0002,pain,2026-11-01T01:30:00,3\nP-0001,pain,2026-10-25T02:30,3\nP-0001,fatigue,2026-10-26T02:30,3\n"
        _ = try f.importFile(try f.write("dst.csv", csv))
        #expect(try f.records("P-0002").first?.start.iso8601 == "2026-11-01T01:30:00-04:00")
        let p1 = try f.records("P-0001")
        #expect(p1.first { $0.kind == .pain }?.start.iso8601 == "2026-10-25T02:30:00+02:00")
        #expect(p1.first { $0.kind == .fatigue }?.start.iso8601 == "2026-10-26T02:30:00+01:00")
    }

    static let badRows: [(String, String, String)] = [
        ("P-0001,pain,2026-10-02T08:00:00,,four,,,,", "value", "expected a number"),
        ("P-0001,painn,2026-10-02T08:00:00,,4,,,,", "kind", "unknown record kind"),
        ("P-9999,pain,2026-10-02T08:00:00,,4,,,,", "participant", "no enrolled participant"),
        (",pain,2026-10-02T08:00:00,,4,,,,", "participant", "a participant study code is required"),
        ("P-0001,,2026-10-02T08:00:00,,4,,,,", "kind", "a record kind is required"),
        ("P-0001,pain,,,4,,,,", "start", "a start instant is required"),
        ("P-0001,pain,2026-10-02T08:00:00,,11,,,,", "value", "out of range"),
        ("P-0001,heart_rate,2026-10-02T08:00:00,,400,/min,,,", "value", "out of range"),
        ("P-0001,steps,2026-10-02T08:00:00,,10.5,,,,", "value", "whole number"),
        ("P-0001,heart_rate,2026-10-02T08:00:00,,,,,,", "value", "a value is required"),
        ("P-0001,pain,2001-01-01T08:00:00Z,,4,,,,", "start", "before the participant's enrollment"),
        ("P-0001,pain,2026-08-31T23:59:00+02:00,,4,,,,", "start", "before the participant's enrollment"),
        ("P-0001,pain,2026-12-01T00:00:00+01:00,,4,,,,", "start", "after the participant's study period"),
        ("P-0001,pain,2026-11-20T12:06:00Z,,4,,,,", "start", "in the future"),
        ("P-0001,body_mass,2026-10-02T08:00:00,,70,kg,,,", "kind", "does not collect"),
        ("P-0001,pain,2026-10-02T25:00,,4,,,,", "start", "ISO 8601"),
        ("P-0001,pain,2026-10-02T08:00:00,2026-10-02T07:00:00,4,,,,", "end", "before the start"),
        ("P-0001,pain,2026-10-02T08:00:00,yesterday,4,,,,", "end", "ISO 8601"),
        ("P-0001,heart_rate,2026-10-02T08:00:00,,70,furlongs,,,", "unit", "unit not accepted"),
        ("P-0001,flare,2026-10-02T08:00:00,,,furlongs,,,", "unit", "unit not accepted"),
        ("P-0001,medication_dose,2026-10-02T08:00:00,,5,,,,", "text", "needs a text"),
        ("P-0003,pain,2026-10-02T08:00:00,,4,,,,", "participant", "P-0003"),
    ]

    @Test(arguments: badRows)
    func aBadRowStoresNothingAndNamesLineAndField(row: String, field: String, message: String) throws {
        let f = try ImportFixture()
        defer { f.cleanup() }
        let batches = try f.batchCount()
        let error = try #require(try f.importError("bad.csv", Self.header + "P-0001,pain,2026-10-02T07:00:00,,4,,,,\n" + row + "\n"))
        #expect(error.location?.line == 3)
        #expect(error.location?.field == field)
        #expect(error.location?.file?.hasSuffix("bad.csv") == true)
        #expect(error.message.contains(message), "\(error.message)")
        #expect(try f.recordCount() == 0)
        #expect(try f.batchCount() == batches)
    }

    @Test func malformedCSVIsRejectedWithItsLine() throws {
        let f = try ImportFixture()
        defer { f.cleanup() }
        let good = "P-0001,pain,2026-10-02T07:00:00,,4,,,,\n"
        let cases: [(String, Int, String)] = [
            (Self.header + good + "P-0001,pain,2026-10-02T08:00:00,,4,,,\n", 3, "expected 9 fields, found 8"),
            (Self.header + good + "P-0001,pain,2026-10-02T08:00:00,,4,,,,\"oops\n", 3, "not closed"),
            (Self.header + good + "P-0001,pa\"in,2026-10-02T08:00:00,,4,,,,\n", 3, "quote appears inside"),
            (Self.header + good + "P-0001,\"pain\"x,2026-10-02T08:00:00,,4,,,,\n", 3, "text follows a closing quote"),
            ("participant,kind,start,valeu\n", 1, "unknown column"),
            ("participant,kind,value\n", 1, "lacks the required column 'start'"),
            ("participant,kind,start,kind\n", 1, "named twice"),
            ("", 1, "empty"),
        ]
        for (text, line, message) in cases {
            let error = try #require(try f.importError("m.csv", text))
            #expect(error.location?.line == line, "\(error)")
            #expect(error.message.contains(message), "\(error.message)")
        }
        #expect(try f.recordCount() == 0)
    }

    @Test func headerIsCaseAndSpaceInsensitiveAndBOMAndCRLFAreAccepted() throws {
        let f = try ImportFixture()
        defer { f.cleanup() }
        let text = "\u{FEFF}Participant, KIND ,start,Value\r\nP-0001,pain,2026-10-02T08:00:00,4\r\n\r\nP-0001,pain,2026-10-02T09:00:00,5"
        let result = try f.importFile(try f.write("bom.csv", text))
        #expect(result.inserted == 2)
        let error = try #require(try f.importError("crlf.csv", "participant,kind,start,value\r\n\r\nP-0001,pain,2026-10-02T08:00:00,4\r\nP-0001,pain,2026-10-02T08:00:00,x\r\n"))
        #expect(error.location?.line == 4)
    }

    /// Rows are validated on a reader thread and inserted in batches of 256: a bad row after
    /// many batches have been inserted still leaves nothing stored, and with a rejects file the
    /// counts add up across batches.
    @Test func rowsSpanningManyBatchesAreStillAllOrNothing() throws {
        let f = try ImportFixture()
        defer { f.cleanup() }
        func row(_ n: Int, value: String) -> String {
            "P-0001,heart_rate,2026-10-\(String(format: "%02d", 2 + n / 1_440))T\(String(format: "%02d", n / 60 % 24)):\(String(format: "%02d", n % 60)):00,,\(value),,,watch,\n"
        }
        var csv = Self.header
        for n in 0..<2_000 { csv += row(n, value: n == 1_800 ? "fast" : "70") }
        let error = try #require(try f.importError("long.csv", csv))
        #expect(error.location?.line == 1_802 && error.location?.field == "value")
        #expect(try f.recordCount() == 0 && f.batchCount() == 0)

        var mixed = Self.header
        for n in 0..<2_000 { mixed += row(n, value: n % 300 == 7 ? "fast" : "70") }
        let rejectsURL = f.directory.appendingPathComponent("rejects.csv")
        let result = try f.importFile(try f.write("mixed-long.csv", mixed), rejects: rejectsURL)
        let bad = (0..<2_000).filter { $0 % 300 == 7 }.count
        #expect(result.rows == 2_000 && result.rejected == bad && result.inserted == 2_000 - bad && result.duplicates == 0)
        #expect(try f.recordCount() == 2_000 - bad)
        let rejected = try String(contentsOf: rejectsURL, encoding: .utf8).split(separator: "\r\n").dropFirst().map { $0.prefix { $0 != "," } }
        #expect(rejected == (0..<2_000).filter { $0 % 300 == 7 }.map { Substring(String($0 + 2)) })
    }

    @Test func rejectsFileKeepsGoodRowsAndListsBadOnes() throws {
        let f = try ImportFixture()
        defer { f.cleanup() }
        let csv = "participant,kind,start,value,note\nP-0001,fatigue,2026-10-02T09:00:00,3,\nP-0001,fatigue,2026-10-02T10:00:00,99,\"a, b\"\nP-0003,pain,2026-10-02T10:00:00,2,\n"
        let rejectsURL = f.directory.appendingPathComponent("rejects.csv")
        let result = try f.importFile(try f.write("mixed.csv", csv), rejects: rejectsURL)
        #expect(result.inserted == 1 && result.rejected == 2 && result.rows == 3)
        let rejects = try String(contentsOf: rejectsURL, encoding: .utf8)
        let lines = rejects.split(separator: "\r\n").map(String.init)
        #expect(lines.first == "line,field,reason,participant,kind,start,end,value,unit,text,source,note")
        #expect(lines.count == 3)
        #expect(lines[1].hasPrefix("3,value,out of range for fatigue: expected 0 to 10 {score},P-0001,fatigue,2026-10-02T10:00:00,,99,,,,\"a, b\""))
        #expect(lines[2].hasPrefix("4,participant,participant P-0003: "))
        let mode = try FileManager.default.attributesOfItem(atPath: rejectsURL.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func ndjsonImportsTheSameRecordsAsCSV() throws {
        let f = try ImportFixture()
        defer { f.cleanup() }
        let nd = """
            {"participant":"P-0001","kind":"heart_rate","start":"2026-10-02T08:30:00","value":72,"unit":"/min","source":"watch","note":null}
            \r
            {"participant":"P-0001","kind":"ambient_temperature","start":"2026-10-02T12:00:00+01:00","value":68,"unit":"[degF]"}
            {"kind":"steps","participant":"P-0002","start":"2026-10-02","end":"2026-10-02T23:59:59","value":"1200","text":""}

            """
        let result = try f.importFile(try f.write("w.ndjson", nd))
        #expect(result.format == "ndjson" && result.inserted == 3)
        let p1 = try f.records("P-0001")
        #expect(p1.first { $0.kind == .heartRate }?.start.iso8601 == "2026-10-02T08:30:00+02:00")
        let temperature = try #require(p1.first { $0.kind == .ambientTemperature }?.value)
        #expect(abs(temperature - 20) < 1e-9)
        let steps = try #require(try f.records("P-0002").first)
        #expect(steps.value == 1200 && steps.text == nil && steps.start.iso8601 == "2026-10-02T00:00:00-04:00")
        // The same rows again as .jsonl are duplicates.
        #expect(try f.importFile(try f.write("w.jsonl", nd)).duplicates == 3)
    }

    @Test func badNDJSONNamesItsLine() throws {
        let f = try ImportFixture()
        defer { f.cleanup() }
        let good = "{\"participant\":\"P-0001\",\"kind\":\"pain\",\"start\":\"2026-10-02T08:00:00\",\"value\":4}\n"
        let cases: [(String, Int, String?, String)] = [
            (good + "{\"participant\":\"P-0001\",\"kind\":\"pain\",\"start\":\"2026-10-02T09:00:00\",\"value\":true}\n", 2, "value", "true/false"),
            (good + "{\"participant\":\"P-0001\",\"kind\":\"pain\",\"start\":\"2026-10-02T09:00:00\",\"value\":[4]}\n", 2, "value", "nested"),
            (good + "{\"participant\":\"P-0001\",\"kind\":\"pain\",\"strat\":\"2026-10-02T09:00:00\"}\n", 2, nil, "unknown column"),
            (good + "\n{\"participant\":\"P-0001\",\"kind\":\"pain\",\n", 3, nil, "not valid JSON"),
            (good + "[1,2]\n", 2, nil, "expected a JSON object"),
            (good + "{\"participant\":\"P-0001\",\"kind\":\"pain\",\"start\":\"2026-10-02T09:00:00\",\"value\":44}", 2, "value", "out of range"),
        ]
        for (text, line, field, message) in cases {
            let error = try #require(try f.importError("bad.ndjson", text))
            #expect(error.location?.line == line, "\(error)")
            #expect(error.location?.field == field, "\(error)")
            #expect(error.message.contains(message), "\(error.message)")
        }
        #expect(try f.recordCount() == 0)
    }

    @Test func jsonArrayNamesTheElement() throws {
        let f = try ImportFixture()
        defer { f.cleanup() }
        let json = "[{\"participant\":\"P-0001\",\"kind\":\"pain\",\"start\":\"2026-10-02T08:00:00\",\"value\":4},{\"participant\":\"P-0001\",\"kind\":\"pain\",\"start\":\"2026-10-02T09:00:00\",\"value\":40}]"
        let error = try #require(try f.importError("a.json", json))
        #expect(error.location?.line == 2 && error.location?.field == "value")
        #expect(try f.importFile(try f.write("b.json", "[{\"participant\":\"P-0001\",\"kind\":\"pain\",\"start\":\"2026-10-02T08:00:00\",\"value\":4}]")).inserted == 1)
    }

    @Test func migraineTriggersAreNormalisedAndLongTextRefused() throws {
        let f = try ImportFixture()
        defer { f.cleanup() }
        let long = String(repeating: "x", count: 5001)
        let error = try #require(try f.importError("n.csv", "participant,kind,start,value,note\nP-0001,pain,2026-10-02T08:00:00,4,\(long)\n"))
        #expect(error.location?.field == "note" && error.message.contains("5000"))
        let ok = try f.importFile(try f.write("ok.csv", "participant,kind,start,value,note\nP-0001,pain,2026-10-02T08:00:00,4,\(String(repeating: "é", count: 5000))\n"))
        #expect(ok.inserted == 1)
    }

    @Test func withdrawalStopsLaterRecords() throws {
        let f = try ImportFixture()
        defer { f.cleanup() }
        _ = try WithdrawalService(workspace: f.workspace).withdraw(code: "P-0002", mode: .stop, requester: .staff(reason: "moved"), dryRun: false)
        // Withdrawn at "now" (2026-11-20T12:00Z): earlier data is still accepted, nothing at or after it.
        #expect(try f.importFile(try f.write("a.csv", "participant,kind,start,value\nP-0002,pain,2026-11-20T11:59:00Z,4\n")).inserted == 1)
        let error = try #require(try f.importError("b.csv", "participant,kind,start,value\nP-0002,pain,2026-11-20T12:00:00Z,4\n"))
        #expect(error.location?.field == "participant" && error.location?.line == 2)
        #expect(error.code == .policy || error.code == .invalidInput)
    }
}
