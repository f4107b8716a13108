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

    static func read(_ bytes: [UInt8], name: String = "export.xml", chunk: Int = 4096, keepMetadata: Set<String> = []) throws -> Read {
        var result = Read()
        let reader = try AppleHealthReader(
            name: name, keepMetadata: keepMetadata, onSample: { result.samples.append($0) }, onMe: { result.me.append($0) })
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

    static func fixture(chunk: Int = 4096, keepMetadata: Set<String> = []) throws -> Read {
        try read(Array(try Data(contentsOf: AppleHealthFixture.exportXML)), chunk: chunk, keepMetadata: keepMetadata)
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

    @Test func mapsActivityBodyCompositionAndIntakeTypes() throws {
        let read = try Self.fixture()
        let cases: [(String, String, RecordKind, Double)] = [
            ("BodyFatPercentage", "2026-10-04 07:00:00 +0200", .bodyFatPercentage, 21),  // a fraction with unit %
            ("BodyMassIndex", "2026-10-04 07:00:00 +0200", .bmi, 22.1),  // unit "count"
            ("DistanceWalkingRunning", "2026-10-03 09:00:00 +0200", .distanceWalkingRunning, 610),  // km → m
            ("FlightsClimbed", "2026-10-03 09:00:00 +0200", .flightsClimbed, 2),
            ("ActiveEnergyBurned", "2026-10-03 09:00:00 +0200", .activeEnergy, 31.2),
            ("BasalEnergyBurned", "2026-10-03 09:00:00 +0200", .basalEnergy, 11),
            ("AppleExerciseTime", "2026-10-03 09:00:00 +0200", .exerciseTime, 1),
            ("DietaryWater", "2026-10-03 12:00:00 +0200", .waterIntake, 250),
            ("DietaryCaffeine", "2026-10-03 08:00:00 +0200", .caffeineIntake, 95),
        ]
        for (type, start, kind, value) in cases {
            let s = try Self.sample(read, type, at: start)
            #expect(s.outcome == .mapped, "\(type)")
            #expect(s.kind == kind, "\(type)")
            #expect(abs((s.value ?? -1) - value) < 1e-9, "\(type): \(String(describing: s.value))")
        }
        // A mindful session has no value: its period (12:00 to 12:05) is the duration.
        let mindful = try #require(read.samples.first { $0.type == "HKCategoryTypeIdentifierMindfulSession" })
        #expect(mindful.kind == .mindfulSession && mindful.outcome == .mapped && mindful.value == 5)
        // Every sample of the fixture now has a kind (in-bed and awake periods are sleep_duration samples, not collected).
        #expect(read.samples.filter { $0.kind == nil }.isEmpty)
    }

    @Test func workoutsBecomeDurationWithTheActivityType() throws {
        let read = try Self.fixture()
        let workout = try #require(read.samples.first { $0.kind == .workout })
        #expect(workout.type == "HKWorkoutActivityTypeRunning")
        #expect(workout.outcome == .mapped)
        #expect(workout.value == 30.5)
        #expect(workout.text == "running")
        #expect(workout.source == "Apple Watch")
        #expect(workout.end.map { $0.epochMilliseconds - workout.start.epochMilliseconds } == 1_830_000)
        let other = try Self.read(Array("""
            <HealthData>
            <Workout workoutActivityType="HKWorkoutActivityTypeTraditionalStrengthTraining" duration="1.25" durationUnit="hr" sourceName="x" startDate="2026-10-05 18:00:00 +0200" endDate="2026-10-05 19:15:00 +0200"/>
            <Workout workoutActivityType="HKWorkoutActivityTypeSomethingNew" sourceName="x" startDate="2026-10-06 18:00:00 +0200" endDate="2026-10-06 18:45:00 +0200"/>
            <Workout workoutActivityType="HKWorkoutActivityTypeYoga" duration="20" durationUnit="furlong" sourceName="x" startDate="2026-10-07 18:00:00 +0200" endDate="2026-10-07 18:20:00 +0200"/>
            </HealthData>
            """.utf8))
        #expect(other.samples.map(\.text) == ["traditional_strength_training", "other", "yoga"])
        #expect(other.samples.map(\.value) == [75, 45, nil])  // hours → minutes; no duration: the period
        #expect(other.samples.map(\.outcome) == [.mapped, .mapped, .unitRefused])
    }

    /// Each unit Apple writes for the newly mapped types, converted to the kind's canonical unit.
    @Test(arguments: [
        ("DistanceWalkingRunning", "m", 1200, 1200), ("DistanceWalkingRunning", "km", 1.2, 1200),
        ("DistanceWalkingRunning", "mi", 1, 1609.344), ("DistanceWalkingRunning", "ft", 1000, 304.8),
        ("DistanceWalkingRunning", "yd", 100, 91.44), ("DistanceWalkingRunning", "cm", 250, 2.5),
        ("ActiveEnergyBurned", "kcal", 100, 100), ("ActiveEnergyBurned", "Cal", 100, 100), ("ActiveEnergyBurned", "kJ", 418.4, 100),
        ("ActiveEnergyBurned", "cal", 100_000, 100), ("BasalEnergyBurned", "kJ", 41.84, 10),
        ("AppleExerciseTime", "min", 30, 30), ("AppleExerciseTime", "hr", 0.5, 30), ("AppleExerciseTime", "s", 1800, 30),
        ("BodyFatPercentage", "%", 0.215, 21.5), ("BodyMassIndex", "count", 22.5, 22.5), ("FlightsClimbed", "count", 3, 3),
        ("DietaryWater", "mL", 250, 250), ("DietaryWater", "L", 0.5, 500), ("DietaryWater", "dL", 2, 200), ("DietaryWater", "cL", 33, 330),
        ("DietaryWater", "fl_oz_us", 8, 236.5882365),
        ("DietaryCaffeine", "mg", 95, 95), ("DietaryCaffeine", "g", 0.095, 95), ("DietaryCaffeine", "mcg", 95_000, 95),
    ] as [(String, String, Double, Double)])
    func convertsEachAppleUnit(type: String, unit: String, value: Double, expected: Double) throws {
        let read = try Self.read(Array("""
            <HealthData><Record type="HKQuantityTypeIdentifier\(type)" sourceName="x" unit="\(unit)" startDate="2026-10-02 08:00:00 +0200" endDate="2026-10-02 08:10:00 +0200" value="\(value)"/></HealthData>
            """.utf8))
        let sample = try #require(read.samples.first)
        #expect(sample.outcome == .mapped)
        #expect(abs((sample.value ?? .nan) - expected) < 1e-6, "\(type) \(unit): \(String(describing: sample.value))")
    }

    /// A unit of another dimension (a count for a distance, kg for a percentage) is refused.
    @Test(arguments: [
        ("DistanceWalkingRunning", "count"), ("BodyMassIndex", "%"), ("FlightsClimbed", "m"), ("BodyFatPercentage", "kg"),
        ("DietaryWater", "mg"), ("DietaryCaffeine", "mL"), ("ActiveEnergyBurned", "min"),
    ])
    func refusesUnitsOfAnotherDimension(type: String, unit: String) throws {
        let read = try Self.read(Array("""
            <HealthData><Record type="HKQuantityTypeIdentifier\(type)" sourceName="x" unit="\(unit)" startDate="2026-10-02 08:00:00 +0200" endDate="2026-10-02 08:10:00 +0200" value="3"/></HealthData>
            """.utf8))
        #expect(read.samples.map(\.outcome) == [.unitRefused])
    }

    @Test func keptMetadataKeysReachTheSampleOthersAreDropped() throws {
        let read = try Self.fixture(keepMetadata: ["HKMetadataKeyHeartRateMotionContext", "HKIndoorWorkout"])
        #expect(try Self.sample(read, "HeartRate", at: "2026-10-02 08:00:00 +0200").metadata == "HKMetadataKeyHeartRateMotionContext=1")
        #expect(read.samples.first { $0.kind == .workout }?.metadata == "HKIndoorWorkout=0")
        // The Withings user id is not kept: no sample carries it, and it is counted as dropped.
        #expect(try Self.sample(read, "BodyMass", at: "2026-10-04 07:00:00 +0200").metadata == nil)
        #expect(!read.samples.contains { $0.metadata?.contains("58213377") == true })
        #expect(read.samples.compactMap(\.metadata).count == 2)
        #expect(read.skipped["MetadataEntry (values dropped)"] == 1)
        #expect(read.skipped["MetadataEntry (kept by keep_metadata, in the note)"] == 2)
        // Without the rule, every value is dropped.
        let plain = try Self.fixture()
        #expect(plain.samples.allSatisfy { $0.metadata == nil })
        #expect(plain.skipped["MetadataEntry (values dropped)"] == 3)
    }

    @Test func keptValuesAreJoinedAndUnsafeValuesRefused() throws {
        let read = try Self.read(Array("""
            <HealthData>
            <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="x" unit="count/min" startDate="2026-10-02 08:00:00 +0200" endDate="2026-10-02 08:00:00 +0200" value="70">
             <MetadataEntry key="HKMetadataKeyHeartRateMotionContext" value="2"/>
             <MetadataEntry key="HKMetadataKeyWasUserEntered" value="1"/>
            </Record>
            <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="x" unit="count/min" startDate="2026-10-02 08:01:00 +0200" endDate="2026-10-02 08:01:00 +0200" value="71">
             <MetadataEntry key="HKMetadataKeyHeartRateMotionContext" value="a=b; c"/>
            </Record>
            <Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="x" startDate="2026-10-02 08:00:00 +0200" endDate="2026-10-02 08:00:00 +0200">
             <MetadataEntry key="HKMetadataKeyWasUserEntered" value="1"/>
            </Correlation>
            </HealthData>
            """.utf8), keepMetadata: ["HKMetadataKeyHeartRateMotionContext", "HKMetadataKeyWasUserEntered"])
        #expect(read.samples.map(\.metadata) == ["HKMetadataKeyHeartRateMotionContext=2; HKMetadataKeyWasUserEntered=1", nil])
        #expect(read.skipped["MetadataEntry (kept key, value refused)"] == 1)
        // An entry outside a Record or Workout (a correlation's own) belongs to no sample: dropped.
        #expect(read.skipped["MetadataEntry (values dropped)"] == 1)
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
            "WorkoutRoute (GPS, not imported)": 1, AppleHealthReader.workoutEnergyLeftOut: 1, AppleHealthReader.workoutDistanceLeftOut: 1,
            "ActivitySummary (not imported)": 1,
        ])
        #expect(read.me == [AppleHealthMe(birthDate: CivilDate(year: 1980, month: 2, day: 29), sex: .female)])
    }

    /// An older export (as healthkit-to-sqlite's test export is shaped): no XML declaration, the
    /// `HKWasUserEntered` spelling, a workout with `totalDistance` and `totalEnergyBurned` attributes.
    static let olderExport = """
        <HealthData locale="en_US">
         <ExportDate value="2019-07-19 10:36:11 -0700"/>
         <Record type="HKQuantityTypeIdentifierBodyMassIndex" sourceName="Scale app" unit="count" startDate="2019-04-18 08:25:32 -0700" endDate="2019-04-18 08:25:32 -0700" value="22.5">
          <MetadataEntry key="Vendor User Identifier" value="1"/>
          <MetadataEntry key="HKWasUserEntered" value="0"/>
         </Record>
         <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="5.2" durationUnit="min" totalDistance="0.5" totalDistanceUnit="mi" totalEnergyBurned="48.7" totalEnergyBurnedUnit="kcal" sourceName="Apple Watch" startDate="2019-04-14 07:25:41 -0700" endDate="2019-04-14 07:30:52 -0700"/>
        </HealthData>
        """

    @Test(arguments: ["HKMetadataKeyWasUserEntered", "HKWasUserEntered"])
    func olderKeySpellingsAreKeptUnderTheProtocolsName(kept: String) throws {
        let read = try Self.read(Array(Self.olderExport.utf8), keepMetadata: [kept])
        let bmi = try #require(read.samples.first { $0.kind == .bmi })
        #expect(bmi.metadata == "\(kept)=0")
        #expect(read.skipped["MetadataEntry (values dropped)"] == 1)  // the vendor's user id
    }

    @Test func workoutTotalsAreCountedAsLeftOutWithTheReason() throws {
        let read = try Self.read(Array(Self.olderExport.utf8))
        let workout = try #require(read.samples.first { $0.kind == .workout })
        #expect(workout.value == 5.2)
        #expect(read.skipped[AppleHealthReader.workoutDistanceLeftOut] == 1)
        #expect(read.skipped[AppleHealthReader.workoutEnergyLeftOut] == 1)
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
