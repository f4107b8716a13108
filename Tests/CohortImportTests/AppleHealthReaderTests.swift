import CohortCore
@testable import CohortImport
import Foundation
import Testing

/// The hand-written export in Tests/Fixtures/apple-health (every mapped type, every privacy case).
enum AppleHealthFixture {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/apple-health")
    static var exportXML: URL { directory.appendingPathComponent("export.xml") }
}

struct AppleHealthReaderTests {
    struct Read {
        var samples: [AppleHealthSample] = []
        var me: [AppleHealthMe] = []
        var skipped: [String: Int] = [:]
    }

    static func read(_ bytes: [UInt8], name: String = "export.xml", chunk: Int = 4096) throws -> Read {
        var result = Read()
        let reader = try AppleHealthReader(name: name, onSample: { result.samples.append($0) }, onMe: { result.me.append($0) })
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + chunk)
            try bytes[offset..<end].withUnsafeBytes { try reader.feed($0) }
            offset = end
        }
        try reader.finish()
        result.skipped = reader.skipped
        return result
    }

    static func fixture(chunk: Int = 4096) throws -> Read {
        try read(Array(try Data(contentsOf: AppleHealthFixture.exportXML)), chunk: chunk)
    }

    static func sample(_ read: Read, _ type: String, at start: String) throws -> AppleHealthSample {
        let instant = try #require(start.withCString { p in
            AppleHealthTimestamp.parse(UnsafeBufferPointer(start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: strlen(p)))
        })
        return try #require(read.samples.first { $0.type == "HKQuantityTypeIdentifier" + type && $0.start == instant })
    }

    @Test func mapsEveryQuantityTypeToItsKindInCanonicalUnits() throws {
        let read = try Self.fixture()
        let cases: [(String, String, RecordKind, Double)] = [
            ("HeartRate", "2026-10-02 08:00:00 +0200", .heartRate, 72),
            ("HeartRate", "2026-10-02 08:05:00 +0200", .heartRate, 88.5),
            ("RestingHeartRate", "2026-10-02 00:00:00 +0200", .restingHeartRate, 58),
            ("HeartRateVariabilitySDNN", "2026-10-02 07:00:00 +0200", .hrvSDNN, 45.25),
            ("StepCount", "2026-10-03 09:00:00 +0200", .steps, 812),
            ("OxygenSaturation", "2026-10-04 03:00:00 +0200", .spo2, 97),  // Apple writes a fraction with unit %
            ("RespiratoryRate", "2026-10-04 03:00:00 +0200", .respiratoryRate, 14.5),
            ("BodyMass", "2026-10-04 07:00:00 +0200", .bodyMass, 150 * 0.45359237),  // lb → kg
        ]
        for (type, start, kind, value) in cases {
            let s = try Self.sample(read, type, at: start)
            #expect(s.outcome == .mapped, "\(type)")
            #expect(s.kind == kind)
            #expect(abs((s.value ?? -1) - value) < 1e-9, "\(type): \(String(describing: s.value))")
        }
    }

    @Test func keepsTheWrittenOffsetAndTheEnd() throws {
        let read = try Self.fixture()
        let steps = try Self.sample(read, "StepCount", at: "2026-10-03 09:00:00 +0200")
        #expect(steps.start.utcOffsetSeconds == 7200)
        #expect(steps.start.epochMilliseconds == 1_791_010_800_000)  // 2026-10-03T07:00:00Z
        #expect(steps.end.map { $0.epochMilliseconds - steps.start.epochMilliseconds } == 600_000)
        // A point sample has no end.
        #expect(try Self.sample(read, "HeartRate", at: "2026-10-02 08:00:00 +0200").end == nil)
    }

    @Test func sleepStagesBecomeHoursAndInBedOrAwakeAreNotSleep() throws {
        let read = try Self.fixture()
        let sleep = read.samples.filter { $0.type == "HKCategoryTypeIdentifierSleepAnalysis" }
        #expect(sleep.count == 5)
        #expect(sleep.filter { $0.outcome == .mapped }.map(\.text) == ["core", "deep", "rem"])
        #expect(sleep.filter { $0.outcome == .mapped }.map { $0.value ?? 0 } == [1.5, 1.25, 0.75])
        #expect(sleep.filter { $0.outcome == .notCollected }.count == 2)  // in bed, awake
    }

    @Test func typesWithoutAKindAreNotCollected() throws {
        let read = try Self.fixture()
        let unmapped = Set(read.samples.filter { $0.kind == nil }.map(\.type))
        #expect(unmapped == [
            "HKQuantityTypeIdentifierBodyFatPercentage", "HKQuantityTypeIdentifierBodyMassIndex", "HKQuantityTypeIdentifierDistanceWalkingRunning",
            "HKQuantityTypeIdentifierFlightsClimbed", "HKQuantityTypeIdentifierActiveEnergyBurned", "HKQuantityTypeIdentifierBasalEnergyBurned",
            "HKQuantityTypeIdentifierAppleExerciseTime", "HKQuantityTypeIdentifierDietaryWater", "HKQuantityTypeIdentifierDietaryCaffeine",
            "HKCategoryTypeIdentifierMindfulSession", "HKWorkoutActivityTypeRunning",
        ])
        #expect(read.samples.filter { $0.kind == nil }.allSatisfy { $0.outcome == .notCollected })
    }

    @Test func refusesUnknownUnitsAndNonNumbers() throws {
        let read = try Self.fixture()
        #expect(try Self.sample(read, "HeartRate", at: "2026-10-02 09:00:00 +0200").outcome == .unitRefused)  // count/s
        let bad = try Self.read(Array("""
            <HealthData><Record type="HKQuantityTypeIdentifierHeartRate" sourceName="x" unit="count/min" startDate="2026-10-02 08:00:00 +0200" endDate="2026-10-02 08:00:00 +0200" value="fast"/></HealthData>
            """.utf8))
        #expect(bad.samples.map(\.outcome) == [.valueRefused])
    }

    @Test func sourcesKeepOnlyTheProductType() throws {
        let read = try Self.fixture()
        let sources = Set(read.samples.map(\.source))
        #expect(sources.isSubset(of: ["Watch6,2", "iPhone14,5", "Apple Watch", "iPhone", "other", ""]))
        #expect(!read.samples.contains { $0.source.contains("Simon") })
        #expect(try Self.sample(read, "HeartRate", at: "2026-10-02 08:00:00 +0200").source == "Watch6,2")
        #expect(try Self.sample(read, "BodyMass", at: "2026-10-04 07:00:00 +0200").source == "other")
    }

    @Test func countsWhatIsNotImported() throws {
        let read = try Self.fixture()
        #expect(read.skipped == [
            "MetadataEntry (values dropped)": 3, "HeartRateVariabilityMetadataList (beat-to-beat, dropped)": 1,
            "WorkoutRoute (GPS, not imported)": 1, "WorkoutStatistics (not imported)": 2, "ActivitySummary (not imported)": 1,
        ])
        #expect(read.me == [AppleHealthMe(birthDate: CivilDate(year: 1980, month: 2, day: 29), sex: .female)])
    }

    @Test(arguments: [1, 7, 4096, 1 << 20])
    func chunkBoundariesDoNotChangeTheResult(chunk: Int) throws {
        let read = try Self.fixture(chunk: chunk)
        #expect(read.samples.count == 30)
    }

    @Test func malformedXMLNamesFileAndLine() throws {
        let text = "<HealthData>\n <Record type=\"HKQuantityTypeIdentifierHeartRate\"\n  value=\"7\" <oops/>\n</HealthData>\n"
        let error = try #require(throws: CohortError.self) { _ = try Self.read(Array(text.utf8), name: "bad.xml") }
        #expect(error.location?.file == "bad.xml")
        #expect(error.location?.line == 3)
        #expect(error.message.contains("not well-formed"))
    }

    @Test func documentCutShortIsAnError() throws {
        let bytes = Array(try Data(contentsOf: AppleHealthFixture.exportXML))
        let error = try #require(throws: CohortError.self) { _ = try Self.read(Array(bytes[0..<(bytes.count * 2 / 3)])) }
        #expect(error.message.contains("ends early"))
    }

    @Test func badInstantNamesTheAttribute() throws {
        let text = """
            <HealthData><Record type="HKQuantityTypeIdentifierHeartRate" sourceName="x" unit="count/min" startDate="2026-10-02T08:00:00Z" endDate="2026-10-02 08:00:00 +0200" value="7"/></HealthData>
            """
        let error = try #require(throws: CohortError.self) { _ = try Self.read(Array(text.utf8)) }
        #expect(error.location?.field == "startDate")
        #expect(error.location?.line == 1)
    }

    @Test func externalEntitiesAreNotLoaded() throws {
        let text = """
            <?xml version="1.0"?>
            <!DOCTYPE HealthData [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
            <HealthData><Record type="&secret;" sourceName="x" startDate="2026-10-02 08:00:00 +0200" endDate="2026-10-02 08:00:00 +0200"/></HealthData>
            """
        // Either refused or read without the file's content: never the content of /etc/passwd.
        if let read = try? Self.read(Array(text.utf8)) {
            #expect(!read.samples.contains { $0.type.contains("root") })
        }
    }
}

struct AppleHealthTimestampTests {
    @Test(arguments: [
        ("2026-10-02 08:00:00 +0200", Int64(1_790_920_800_000), Int32(7200)),
        ("2026-03-29 01:59:59 -0530", Int64(1_774_769_399_000), Int32(-19800)),
        ("2024-02-29 00:00:00 +0000", Int64(1_709_164_800_000), Int32(0)),
    ])
    func parsesAppleInstants(text: String, ms: Int64, offset: Int32) throws {
        let t = try #require(Array(text.utf8).withUnsafeBufferPointer { AppleHealthTimestamp.parse($0) })
        #expect(t.epochMilliseconds == ms)
        #expect(t.utcOffsetSeconds == offset)
    }

    @Test(arguments: ["2026-10-02T08:00:00+0200", "2026-02-30 08:00:00 +0200", "2026-10-02 25:00:00 +0200", "2026-10-02 08:00:00 0200", ""])
    func refusesOtherForms(text: String) {
        #expect(Array(text.utf8).withUnsafeBufferPointer { AppleHealthTimestamp.parse($0) } == nil)
    }
}

struct DeviceSourceTests {
    @Test(arguments: [
        ("<<HKDevice: 0x1>, name:Simon's Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,2, software:10.1>", "Simon's Apple Watch", "Watch6,2"),
        ("<<HKDevice: 0x1>, name:Simon's Scale, manufacturer:Withings, model:Body+>", "Withings", "other"),
        ("<<HKDevice: 0x1>, name:Scale, manufacturer:Withings, model:WBS05>", "Withings", "WBS05"),
        (nil, "Simon’s iPhone", "iPhone"),
        (nil, "Jane's Apple Watch", "Apple Watch"),
        (nil, "Oura", "other"),
    ] as [(String?, String, String)])
    func keepsOnlyTheProductType(device: String?, sourceName: String, expected: String) {
        let source = DeviceSource.sanitized(device: device, sourceName: sourceName)
        #expect(source == expected)
        #expect(!source.contains("Simon") && !source.contains("Jane"))
    }
}
