import CohortCore
import CohortKit
import CohortStore
import Foundation
import Testing

/// A workspace on the AxSpA protocol (heart_rate, resting_heart_rate, hrv_sdnn, steps,
/// sleep_duration collected) with P-0001 born 1980-02-29, female, Europe/Berlin, enrolled
/// 2026-09-01 and consented; "now" is 2026-11-20T12:00:00Z.
struct AppleHealthWorkspace {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fixture = repositoryRoot.appendingPathComponent("Tests/Fixtures/apple-health/export.xml")
    let directory: URL
    let workspace: Workspace

    init(birthDate: String = "1980-02-29", sex: String = "female") throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ah-\(UUID().uuidString)")
        workspace = try Workspace.create(
            at: directory.appendingPathComponent("ws"), protocolURL: Self.repositoryRoot.appendingPathComponent("protocols/axspa-wearables.yaml"),
            actor: "test", now: { Date(timeIntervalSince1970: 1_795_176_000) })
        _ = try Roster(workspace: workspace).enroll(
            [(RosterEntry(code: "P-0001", name: "Ann Test", birthDate: birthDate, sex: sex, timeZone: "Europe/Berlin", enrolledOn: "2026-09-01"), line: nil)],
            file: nil, source: "test")
        _ = try ConsentService(workspace: workspace).record(
            code: "P-0001", version: "1.1", signedAt: Timestamp(epochMilliseconds: 1_788_285_600_000), signature: "typed:Test", sharing: .studyOnly)
    }

    func cleanup() { try? FileManager.default.removeItem(at: directory) }

    func importExport(_ url: URL = fixture) throws -> AppleHealthImportSummary {
        try AppleHealthImporter(workspace: workspace).importExport(url, participantCode: "P-0001")
    }

    func records() throws -> [Record] {
        guard let stored = try workspace.store.participant(code: "P-0001") else { return [] }
        var result: [Record] = []
        try workspace.store.forEachRecord(stored.handle, participantID: stored.participant.id) { result.append($0) }
        return result
    }
}

/// Recounts the fixture's summary by another route: a regular expression over the fixture's
/// lines (each sample starts on its own line), DateFormatter, and the rules as the documentation
/// states them.
final class IndependentCount {
    var counts: [String: [String: Int]] = [:]
    var seenKeys: Set<String> = []
    let formatter: DateFormatter = {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
        return f
    }()
    // 2026-09-01 00:00 Europe/Berlin (+02:00) to 90 days later; "now" 2026-11-20T12:00Z.
    let first = Date(timeIntervalSince1970: 1_788_213_600)
    let last = Date(timeIntervalSince1970: 1_788_213_600 + 90 * 86_400)
    let collected: [String: (units: Set<String>, range: ClosedRange<Double>, integer: Bool)] = [
        "HKQuantityTypeIdentifierHeartRate": (["count/min"], 20...300, false),
        "HKQuantityTypeIdentifierRestingHeartRate": (["count/min"], 20...200, false),
        "HKQuantityTypeIdentifierHeartRateVariabilitySDNN": (["ms"], 1...500, false),
        "HKQuantityTypeIdentifierStepCount": (["count"], 0...100_000, true),
    ]

    static func count(_ url: URL) -> [String: [String: Int]] {
        let counter = IndependentCount()
        let text = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
        guard let attribute = try? NSRegularExpression(pattern: "([A-Za-z]+)=\"([^\"]*)\"") else { return [:] }
        for line in text.split(separator: "\n").map(String.init) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("<Record ") || trimmed.hasPrefix("<Workout ") else { continue }
            var attributes: [String: String] = [:]
            for match in attribute.matches(in: trimmed, range: NSRange(trimmed.startIndex..., in: trimmed)) {
                guard let key = Range(match.range(at: 1), in: trimmed), let value = Range(match.range(at: 2), in: trimmed) else { continue }
                attributes[String(trimmed[key])] = String(trimmed[value]).replacingOccurrences(of: "&lt;", with: "<")
                    .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&#8217;", with: "’").replacingOccurrences(of: "&amp;", with: "&")
            }
            counter.sample(trimmed.hasPrefix("<Record ") ? "Record" : "Workout", attributes)
        }
        return counter.counts
    }

    func sample(_ name: String, _ a: [String: String]) {
        guard name == "Record" || name == "Workout", let type = a["type"] ?? a["workoutActivityType"] else { return }
        func add(_ column: String) { counts[type, default: [:]][column, default: 0] += 1 }
        add("seen")
        let start = a["startDate"].flatMap(formatter.date(from:)) ?? .distantPast
        let source: String
        if let hardware = a["device"]?.components(separatedBy: "hardware:").dropFirst().first?.components(separatedBy: ",").first {
            source = hardware + "," + (a["device"]?.components(separatedBy: "hardware:")[1].components(separatedBy: ",")[1] ?? "")
        } else if a["sourceName"]?.contains("Watch") == true {
            source = "Apple Watch"
        } else {
            source = a["sourceName"]?.contains("iPhone") == true ? "iPhone" : "other"
        }
        if type == "HKCategoryTypeIdentifierSleepAnalysis" {
            guard a["value"]?.contains("Asleep") == true else { return add("not_collected") }
        } else if let rule = collected[type] {
            guard start >= first, start < last else { return add("outside_study_period") }
            guard rule.units.contains(a["unit"] ?? "") else { return add("unit_refused") }
            guard let value = Double(a["value"] ?? ""), rule.range.contains(value), !rule.integer || value == value.rounded() else {
                return add("value_refused")
            }
        } else {
            return add("not_collected")
        }
        if start < first || start >= last { return add("outside_study_period") }
        add(seenKeys.insert("\(type)|\(start.timeIntervalSince1970)|\(source)").inserted ? "imported" : "duplicates")
    }
}

struct AppleHealthImporterTests {
    static func columns(_ c: AppleHealthImportSummary.TypeCounts) -> [String: Int] {
        let all = [
            "seen": c.seen, "imported": c.imported, "duplicates": c.duplicates, "outside_study_period": c.outsideStudyPeriod,
            "not_collected": c.notCollected, "unit_refused": c.unitRefused, "value_refused": c.valueRefused, "not_consented": c.notConsented,
        ]
        return all.filter { $0.value != 0 }
    }

    @Test func summaryMatchesAnIndependentRecount() throws {
        let ws = try AppleHealthWorkspace()
        defer { ws.cleanup() }
        let summary = try ws.importExport()
        let expected = IndependentCount.count(AppleHealthWorkspace.fixture)
        #expect(Dictionary(uniqueKeysWithValues: summary.types.map { ($0.type, Self.columns($0)) }) == expected)
        #expect(summary.total.seen == 30)
        #expect(summary.total.imported == 9)
        #expect(try ws.records().count == 9)
        #expect(summary.meCheck == "matched")
        #expect(summary.skipped["MetadataEntry (values dropped)"] == 3)
        // Every type's columns add up to what was seen.
        for c in summary.types {
            #expect(c.seen == c.imported + c.duplicates + c.outsideStudyPeriod + c.notCollected + c.unitRefused + c.valueRefused + c.notConsented)
        }
    }

    @Test func storedRecordsCarryCanonicalValuesOffsetsAndProductTypesOnly() throws {
        let ws = try AppleHealthWorkspace()
        defer { ws.cleanup() }
        _ = try ws.importExport()
        let records = try ws.records()
        #expect(Set(records.map(\.kind)) == [.heartRate, .restingHeartRate, .hrvSDNN, .steps, .sleepDuration])
        #expect(Set(records.compactMap(\.source)) == ["Watch6,2", "Apple Watch", "iPhone14,5"])
        #expect(records.allSatisfy { $0.start.utcOffsetSeconds == 7200 })
        let sleep = records.filter { $0.kind == .sleepDuration }
        #expect(sleep.map(\.value) == [1.5, 1.25, 0.75])
        #expect(sleep.map(\.text) == ["core", "deep", "rem"])
        // No metadata value, device name or Me value reaches the database file.
        let database = try Data(contentsOf: ws.directory.appendingPathComponent("ws/study.db"))
        for secret in ["58213377", "Simon", "HKBiologicalSex"] {
            #expect(database.range(of: Data(secret.utf8)) == nil, "\(secret) is stored")
        }
    }

    @Test func reimportAddsNothingAndANewerExportOnlyWhatIsNew() throws {
        let ws = try AppleHealthWorkspace()
        defer { ws.cleanup() }
        _ = try ws.importExport()
        let again = try ws.importExport()
        #expect(again.total.imported == 0)
        #expect(again.total.duplicates == 10)  // the 9 stored, and the sample the export repeats
        // A newer export: the same file plus one heart rate sample.
        let text = try String(contentsOf: AppleHealthWorkspace.fixture, encoding: .utf8).replacingOccurrences(
            of: " <Record type=\"HKQuantityTypeIdentifierRestingHeartRate\"",
            with: """
                 <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Simon’s Apple Watch" unit="count/min" startDate="2026-11-18 08:00:00 +0100" endDate="2026-11-18 08:00:00 +0100" value="66"/>
                 <Record type="HKQuantityTypeIdentifierRestingHeartRate"
                """)
        let newer = ws.directory.appendingPathComponent("newer.xml")
        try Data(text.utf8).write(to: newer)
        let summary = try ws.importExport(newer)
        #expect(summary.total.imported == 1)
        #expect(summary.types.first { $0.type == "HKQuantityTypeIdentifierHeartRate" }?.imported == 1)
        #expect(try ws.records().count == 10)
    }

    @Test(arguments: [("1980-03-01", "female", "date of birth"), ("1980-02-29", "male", "biological sex")])
    func meMismatchIsAnErrorNamingNoValueAndStoresNothing(birthDate: String, sex: String, what: String) throws {
        let ws = try AppleHealthWorkspace(birthDate: birthDate, sex: sex)
        defer { ws.cleanup() }
        let error = try #require(throws: CohortError.self) { _ = try ws.importExport() }
        #expect(error.message.contains(what))
        for value in ["1980", "female", "Female", "male"] {
            #expect(!error.message.contains(value) && !(error.hint ?? "").contains(value))
        }
        #expect(try ws.records().isEmpty)
    }

    @Test func malformedExportStoresNothing() throws {
        let ws = try AppleHealthWorkspace()
        defer { ws.cleanup() }
        let text = try String(contentsOf: AppleHealthWorkspace.fixture, encoding: .utf8).replacingOccurrences(of: "<ActivitySummary", with: "<ActivitySummary <")
        let bad = ws.directory.appendingPathComponent("bad.xml")
        try Data(text.utf8).write(to: bad)
        let error = try #require(throws: CohortError.self) { _ = try ws.importExport(bad) }
        #expect(error.location?.file == bad.path)
        #expect((error.location?.line ?? 0) > 40)
        #expect(try ws.records().isEmpty)
        #expect(try ws.workspace.store.counts()["import_batches"] == 0)
    }

    @Test func sniffingPicksAppleHealthForExportsOnly() throws {
        #expect(ImportSource.sniff(AppleHealthWorkspace.fixture) == .appleHealth)
        #expect(ImportSource.sniff(AppleHealthWorkspace.repositoryRoot.appendingPathComponent("README.md")) == .cohort)
    }
}
