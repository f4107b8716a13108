import CohortCore
import CohortImport
import Foundation
import Testing

struct HealthMetricsMapperTests {
    static let userMap = ["0f8fad5b-d9cb-469f-a165-70867728950e": "P-0001", "7c9e6679-7425-40de-944b-e07fc1f90ae7": "P-0002"]

    /// Maps every day `read` yields; returns the records and the tally.
    static func map(_ read: ((HealthMetricsDay) throws -> Void) throws -> Void) throws -> ([SourceRecord], ImportTally) {
        var mapper = HealthMetricsMapper(userMap: userMap, collected: Fixtures.collected)
        var records: [SourceRecord] = []
        try read { day in try mapper.map(day) { records.append($0) } }
        return (records, mapper.tally)
    }

    @Test func oneRecordPerCollectedNonNullMetricSpanningTheLocalDay() throws {
        let day = HealthMetricsDay(
            userID: "0f8fad5b-d9cb-469f-a165-70867728950e", recordedAt: "2026-03-29", source: "apple_health", timeZone: "Europe/Berlin",
            metrics: [(.steps, "8000"), (.heartRateMax, "140"), (.bloodOxygenPercent, "97"), (.sleepHours, "7.25")], file: "t", line: 2)
        let (records, tally) = try Self.map { try $0(day) }
        #expect(records.map(\.kind) == ["steps", "sleep_duration"])
        // The day Berlin moves to summer time: midnight is +01:00, the next midnight +02:00.
        #expect(records.allSatisfy { $0.start == "2026-03-29T00:00:00+01:00" && $0.end == "2026-03-30T00:00:00+02:00" })
        #expect(records.map(\.value) == ["8000", "7.25"])
        #expect(records.allSatisfy { $0.participant == "P-0001" && $0.source == "apple_health" })
        #expect(tally.skipped == ["not collected: heart_rate_max": 1, "not collected: blood_oxygen_percent": 1])
    }

    /// The columns that had no kind before the activity and intake families: each becomes its
    /// kind in that kind's canonical unit; min/max heart rate and sleep stages still have none.
    @Test func distanceBodyCompositionIntakeAndMindfulnessColumnsBecomeRecords() throws {
        let newKinds: Set<RecordKind> = [.distanceWalkingRunning, .bodyFatPercentage, .bmi, .waterIntake, .caffeineIntake, .mindfulSession]
        var mapper = HealthMetricsMapper(userMap: Self.userMap, collected: Fixtures.collected.union(newKinds))
        let day = HealthMetricsDay(
            userID: "0f8fad5b-d9cb-469f-a165-70867728950e", recordedAt: "2026-09-10", source: "apple_health", timeZone: "Europe/Berlin",
            metrics: [
                (.distanceMeters, "5230.5"), (.bodyFatPercent, "23.4"), (.bmi, "22.8"), (.waterMl, "1500"), (.caffeineMg, "180"),
                (.mindfulMinutes, "12"), (.heartRateMin, "50"), (.sleepDeepHours, "1.2"),
            ], file: "t", line: 2)
        var records: [SourceRecord] = []
        try mapper.map(day) { records.append($0) }
        #expect(records.map(\.kind) == ["distance_walking_running", "body_fat_percentage", "bmi", "water_intake", "caffeine_intake", "mindful_session"])
        #expect(records.map(\.unit) == ["m", "%", "kg/m2", "mL", "mg", "min"])
        #expect(records.map(\.value) == ["5230.5", "23.4", "22.8", "1500", "180", "12"])
        for record in records {
            let kind = try #require(RecordKind(rawValue: record.kind))
            // The unit is the kind's own, so the validator accepts the value as it stands.
            #expect(record.unit == kind.canonicalUnit)
            #expect(Double(record.value ?? "").map(kind.range.contains) == true)
        }
        #expect(mapper.tally.skipped == ["not collected: heart_rate_min": 1, "not collected: sleep_deep_hours": 1])
        #expect(records.allSatisfy { $0.start == "2026-09-10T00:00:00+02:00" && $0.end == "2026-09-11T00:00:00+02:00" })
    }

    @Test func rowsOfUnmappedUsersAreCountedNeverImported() throws {
        let days = (0..<3).map { i in
            HealthMetricsDay(userID: i == 2 ? "someone-else" : "stranger", recordedAt: "2026-09-1\(i)", source: nil, timeZone: nil, metrics: [(.steps, "10")], file: "t", line: i + 2)
        }
        let (records, tally) = try Self.map { body in for d in days { try body(d) } }
        #expect(records.isEmpty)
        #expect(tally.unmappedRows == 3 && tally.unmappedUsers == 2 && tally.seen == 3)
    }

    @Test func badFieldsAreNamedNotQuoted() throws {
        let badZone = HealthMetricsDay(
            userID: "0f8fad5b-d9cb-469f-a165-70867728950e", recordedAt: "2026-09-10", source: nil, timeZone: "Mars/Olympus", metrics: [], file: "dump.csv", line: 7)
        #expect(throws: CohortError.invalid("unknown time zone name", file: "dump.csv", line: 7, field: "timezone",
            hint: "use an IANA name such as Europe/Berlin, or leave it empty for the participant's zone")) { try Self.map { try $0(badZone) } }
        let badNumber = HealthMetricsDay(
            userID: "0f8fad5b-d9cb-469f-a165-70867728950e", recordedAt: "2026-09-10", source: nil, timeZone: nil, metrics: [(.steps, "lots")],
            file: "dump.csv", line: 8)
        do {
            _ = try Self.map { try $0(badNumber) }
            Issue.record("a non-number was accepted")
        } catch let error as CohortError {
            #expect(error.location == .init(file: "dump.csv", line: 8, field: "steps"))
            #expect(!error.description.contains("lots"))
        }
    }

    @Test func csvDumpIgnoresRawDataAndUnknownColumns() throws {
        let (records, tally) = try Self.map { try HealthMetricsCSV.forEachDay(url: Fixtures.url("health-metrics/dump.csv"), $0) }
        // Row 1: steps, heart_rate_avg, resting, HRV, sleep (5 of 10 non-null metrics); row 2: steps.
        #expect(records.count == 6)
        #expect(tally.perItem == ["steps": 2, "heart_rate_avg": 1, "heart_rate_resting": 1, "heart_rate_variability": 1, "sleep_hours": 1])
        #expect(tally.skipped["not collected: weight_kg"] == 1 && tally.skipped["not collected: caffeine_mg"] == 1)
        #expect(tally.seen == 4 && tally.unmappedRows == 2 && tally.unmappedUsers == 1)
        // raw_data (a device name and a vendor user id) reaches no record.
        for r in records {
            for value in r.columns.values { #expect(!value.contains("Simon") && !value.contains("withings")) }
        }
        #expect(records.first { $0.kind == "heart_rate" }?.value == "71.5")
    }

    @Test func syncBodiesNameTheirMetricPaths() throws {
        let (records, tally) = try Self.map { try HealthMetricsSync.forEachDay(url: Fixtures.url("health-metrics/sync.ndjson"), $0) }
        #expect(records.map(\.kind) == ["resting_heart_rate", "sleep_duration", "steps", "steps"])
        #expect(records.map(\.start) == ["2026-09-11T00:00:00+02:00", "2026-09-11T00:00:00+02:00", "2026-09-11T00:00:00+02:00", "2026-09-12T00:00:00+02:00"])
        #expect(records[0].origins["value"] == "records[0].metrics.heartRateResting")
        // deviceType ("Simon's iPhone") is never imported.
        #expect(records.allSatisfy { $0.source == "apple_health" })
        #expect(tally.unmappedRows == 1 && tally.skipped["not collected: heart_rate_max"] == 1 && tally.skipped["not collected: water_ml"] == 1)
        do {
            _ = try Self.map { try HealthMetricsSync.forEachDay(url: Fixtures.url("health-metrics/sync-bad.json"), $0) }
            Issue.record("a text metric was accepted")
        } catch let error as CohortError {
            #expect(error.location?.field == "records[0].metrics.steps" && error.location?.line == 1)
        }
    }

    @Test func userMapRefusesCodesNotOnTheRoster() throws {
        let map = try UserMap.load(Fixtures.url("health-metrics/users.csv"), codes: ["P-0001", "P-0002"])
        #expect(map.codes == Self.userMap)
        #expect(throws: CohortError.self) { try UserMap.load(Fixtures.url("health-metrics/users.csv"), codes: ["P-0001"]) }
    }
}
