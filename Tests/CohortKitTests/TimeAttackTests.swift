import CohortCore
import CohortCrypto
import CohortDeid
import Foundation
import Testing

@testable import CohortKit
import CohortStore

/// Issue 27, tried as an adversary would: a cohort of 30 participants in New York, Berlin and
/// Sydney with a daily step count (weekends and weekday public holidays lower), a pain log at
/// 08:00, a heart rate every 5 minutes around their zone's autumn 2025 transition and the daily
/// barometric pressure, from 2025-09-25 to 2026-01-30, exported on 2026-02-01 — once under the
/// old policy (whole weeks, no embargo, weather dated, holidays kept), once under the shipped
/// AxSpA protocol — and `cohort deid risk` run on each published bag.
struct TimeAttackCohort {
    static let now = Date(timeIntervalSince1970: 1_769_947_200)  // 2026-02-01T12:00:00Z
    static let zones = ["America/New_York", "Europe/Berlin", "Australia/Sydney"]
    static let firstDay = CivilDate(year: 2025, month: 9, day: 25) ?? CivilDate(daysSinceEpoch: 0)
    static let lastDay = CivilDate(year: 2026, month: 1, day: 30) ?? CivilDate(daysSinceEpoch: 0)
    static let oldPolicy = "    max_days: 182\n    whole_weeks: true\n    embargo_days: 0\n    exogenous: dated\n    holidays: keep\n"

    let directory: URL
    let workspace: Workspace

    /// The public archive the adversary holds: per zone's city, a daily barometric pressure
    /// (hPa) that follows the weather (autocorrelated: each day 0.8 of the last day's anomaly
    /// plus a fresh one), from 200 days before the data to after it.
    static let archive: WeatherArchive = {
        var g = SeededRandom(seed: 2027)
        var series: [String: [String: [Int: Double]]] = [:]
        for zone in zones {
            var anomaly = 0.0
            var days: [Int: Double] = [:]
            for day in (firstDay.daysSinceEpoch - 200)...(lastDay.daysSinceEpoch + 5) {
                anomaly = 0.8 * anomaly + g.normal(mean: 0, sd: 6)
                days[day] = 1013 + anomaly
            }
            series[zone] = ["barometric_pressure": days]
        }
        return WeatherArchive(series: series)
    }()

    /// Day shifts over the same range without the holiday mask (and no embargo): what shifting by
    /// days alone does against holiday alignment.
    static let daysOnly = "    max_days: 182\n    whole_weeks: false\n    embargo_days: 0\n    exogenous: drop\n    holidays: keep\n"

    init(participants count: Int = 30, oldPolicy: Bool) throws {
        try self.init(participants: count, dateShift: oldPolicy ? Self.oldPolicy : nil)
    }

    init(participants count: Int = 30, dateShift: String?) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("attack-\(UUID().uuidString)")
        let fm = FileManager.default
        try fm.createDirectory(at: directory.appendingPathComponent("protocols"), withIntermediateDirectories: true)
        try fm.createSymbolicLink(
            at: directory.appendingPathComponent("templates"), withDestinationURL: ImportFixture.repositoryRoot.appendingPathComponent("templates"))
        var text = try String(contentsOf: ImportFixture.repositoryRoot.appendingPathComponent("protocols/axspa-wearables.yaml"), encoding: .utf8)
        text = text.replacingOccurrences(of: "duration_days: 90\n", with: "duration_days: 200\n")
        if let dateShift {
            let start = try #require(text.range(of: "    max_days: 182\n"))
            let end = try #require(text.range(of: "  k_anonymity:\n"))
            text.replaceSubrange(start.lowerBound..<end.lowerBound, with: dateShift)
        }
        let protocolURL = directory.appendingPathComponent("protocols/study.yaml")
        try Data(text.utf8).write(to: protocolURL)
        workspace = try Workspace.create(at: directory.appendingPathComponent("ws"), protocolURL: protocolURL, actor: "test", now: { Self.now })
        let entries = (0..<count).map { i in
            (
                RosterEntry(
                    code: String(format: "P-%04d", i + 1), name: "At Qu\(["b", "c", "d", "f", "g"][i % 5])\(["k", "l", "m", "n", "p", "r"][i / 5 % 6])o",
                    timeZone: Self.zones[i % Self.zones.count], enrolledOn: "2025-09-20"), line: Int?.none
            )
        }
        _ = try Roster(workspace: workspace).enroll(entries, file: nil, source: "test")
        for i in 0..<count {
            _ = try ConsentService(workspace: workspace).record(
                code: String(format: "P-%04d", i + 1), version: "1.1", signedAt: Timestamp(epochMilliseconds: 1_758_369_600_000), signature: "typed:Test",
                sharing: .broad)
        }
        var g = SeededRandom(seed: 27)
        var weather = SeededRandom(seed: 28)
        var csv = "participant,kind,start,end,value\n"
        for i in 0..<count {
            let code = String(format: "P-%04d", i + 1)
            let zone = Self.zones[i % Self.zones.count]
            let region = PublicHolidays.region(forZone: zone)
            let base = Double(7000 + i * 97 % 3000)
            var day = Self.firstDay
            while day <= Self.lastDay {
                let weekend = day.isoWeekday >= 6
                let holiday = region.map { PublicHolidays.isHoliday(day.daysSinceEpoch, in: $0) } ?? false
                let steps = (weekend ? base * 0.7 : holiday ? base * 0.4 : base) + Double(Int.random(in: -500...500, using: &g))
                csv += "\(code),steps,\(day)T00:00:00,\(day.adding(days: 1))T00:00:00,\(Int(steps))\n"
                csv += "\(code),pain,\(day)T08:00:00,,\(i % 10)\n"
                // The weather service's reading of the city's pressure (the archive's, to 0.1 hPa).
                let pressure = (Self.archive.series[zone]?["barometric_pressure"]?[day.daysSinceEpoch] ?? 1013) + weather.normal(mean: 0, sd: 0.3)
                csv += "\(code),barometric_pressure,\(day)T12:00:00,,\(String(format: "%.1f", pressure))\n"
                day = day.adding(days: 1)
            }
            // A heart rate every 5 minutes from two days before to two days after the autumn
            // transition of 2025, off the wrist 18:00–19:30 (wall-clock times, read in the zone).
            let transition: [String: CivilDate] = [
                "America/New_York": CivilDate(year: 2025, month: 11, day: 2), "Europe/Berlin": CivilDate(year: 2025, month: 10, day: 26),
                "Australia/Sydney": CivilDate(year: 2025, month: 10, day: 5),
            ].compactMapValues { $0 }
            guard let tz = TimeZone(identifier: zone), let night = transition[zone] else { continue }
            let from = Int64(night.adding(days: -2).daysSinceEpoch) * 86_400_000 - Int64(tz.secondsFromGMT(for: Date(timeIntervalSince1970: Double(night.daysSinceEpoch - 2) * 86_400))) * 1000
            var t = from
            while t < from + 4 * 86_400_000 {
                let date = Date(timeIntervalSince1970: Double(t) / 1000)
                let local = Timestamp(epochMilliseconds: t, utcOffsetSeconds: Int32(tz.secondsFromGMT(for: date)))
                let minute = Int(Timestamp.floorDiv(t + Int64(local.utcOffsetSeconds) * 1000, 60_000) % 1440)
                if !(1080..<1170).contains(minute) { csv += "\(code),heart_rate,\(local.iso8601),,\(60 + Int.random(in: 0...20, using: &g))\n" }
                t += 300_000
            }
        }
        let url = directory.appendingPathComponent("records.csv")
        try Data(csv.utf8).write(to: url)
        _ = try RecordImporter(workspace: workspace).importFile(url)
    }

    func cleanup() { try? FileManager.default.removeItem(at: directory) }

    /// Exports CSV to a bag folder created at `createdAt`.
    func export(createdAt: Date = Self.now) throws -> URL {
        let outcome = try ExportJob(
            workspace: workspace,
            options: ExportOptions(
                recipient: "analyst", formats: [.csv], outDirectory: directory.appendingPathComponent("out-\(UUID().uuidString)"),
                createdAt: createdAt, archive: false)
        ).run()
        return try #require(outcome.bagDirectory)
    }

    /// Every participant's true shift under their pseudonym (what the attacker does not have).
    func truth() throws -> [String: Int] {
        let shifter = try DateShifter(key: try workspace.keystore.dateShiftKey(), maxDays: 182, wholeWeeks: false)
        let weeks = try DateShifter(key: try workspace.keystore.dateShiftKey(), maxDays: 182, wholeWeeks: true)
        let pseudonymizer = Pseudonymizer(recipientKey: try workspace.keystore.recipientKey(for: "analyst"))
        let old = try workspace.currentProtocol().studyProtocol.deidentification.dateShift.wholeWeeks
        var result: [String: Int] = [:]
        for stored in try workspace.store.participants(withIdentities: false) {
            result[pseudonymizer.pseudonym(for: stored.participant.id)] = (old ? weeks : shifter).offset(for: stored.participant.id)
        }
        return result
    }
}

struct TimeAttackTests {
    @Test func theAttacksRecoverShiftsUnderTheOldPolicy() throws {
        let cohort = try TimeAttackCohort(oldPolicy: true)
        defer { cohort.cleanup() }
        let bag = try cohort.export()
        let assessment = try DeidRiskService.assess(path: bag)
        let outcomes = Dictionary(uniqueKeysWithValues: (assessment.timeAttacks ?? []).map { ($0.attack, $0) })
        let attacks = try DeidRiskService.timeAttacks(bag: bag)
        let truth = try cohort.truth()
        var correct: [String: Int] = [:]
        for attack in ["freshness", "dst", "holiday", "combined"] {
            for (pseudonym, set) in attacks?.candidates[attack] ?? [:] {
                guard let shift = truth[pseudonym] else { continue }
                #expect(set.contains(shift), "\(attack) ruled out the true shift of \(pseudonym)")
                if set == [shift] { correct[attack, default: 0] += 1 }
            }
        }
        print("old policy:", outcomes.values.sorted { $0.attack < $1.attack }.map { "\($0.attack) \($0.recovered)/\($0.narrowed)/\($0.assessed)" }, "correct:", correct)
        // k over what an acquaintance knows (first-record weekday and month are kept by whole
        // weeks) leaves some participants out: the attacks run on those published.
        let publishedCount = outcomes["combined"]?.assessed ?? 0
        #expect(publishedCount >= 10)
        // Recovered exactly depends on where the random shifts put the holidays: ≥ 1, and all narrowed.
        #expect((outcomes["holiday"]?.recovered ?? 0) >= 1 && outcomes["holiday"]?.narrowed == publishedCount)
        // Keys (so shifts) are random per run, and k decides who is published: freshness is
        // checked against the truth instead of a count. Every published participant's last record
        // lies within two days of the export, so the attack bounds the shift from below at its
        // true value (the set is every shift from the truth up; none learned for the largest
        // backward shift), and it narrows exactly those whose bound leaves under half the range.
        let shifts = try #require(attacks?.shifts)
        let published = Set((attacks?.candidates["holiday"] ?? [:]).keys)
        var expectedNarrowed = 0
        for pseudonym in published {
            guard let shift = truth[pseudonym] else { continue }
            let expected = Set(shifts.filter { $0 >= shift })
            let found = attacks?.candidates["freshness"]?[pseudonym]
            #expect(found == (expected.count < shifts.count ? expected : nil), "freshness bound of \(pseudonym) is not its true shift")
            if expected.count < shifts.count / 2 { expectedNarrowed += 1 }
        }
        #expect(outcomes["freshness"]?.narrowed == expectedNarrowed)
        #expect(published.count == publishedCount)
        #expect(outcomes["exogenous"]?.recovered == publishedCount)
        #expect((correct["combined"] ?? 0) * 4 >= publishedCount)
        #expect(!assessment.holds)
    }

    /// Why the shipped protocols mask holidays: day shifts alone do not stop the alignment (the
    /// adversary compares each day with the same published weekday, which is one real weekday).
    @Test func dayShiftsAloneDoNotDefeatHolidayAlignment() throws {
        let cohort = try TimeAttackCohort(dateShift: TimeAttackCohort.daysOnly)
        defer { cohort.cleanup() }
        let bag = try cohort.export(createdAt: TimeAttackCohort.now.addingTimeInterval(190 * 86_400))
        let attacks = try #require(try DeidRiskService.timeAttacks(bag: bag))
        let truth = try cohort.truth()
        let holiday = attacks.candidates["holiday"] ?? [:]
        let correct = truth.filter { holiday[$0.key] == [$0.value] }.count
        let wrong = holiday.filter { entry in truth[entry.key].map { !entry.value.contains($0) } ?? false }.count
        print("days only:", attacks.outcomes.map { "\($0.attack) \($0.recovered)/\($0.narrowed)/\($0.assessed)" }, "correct:", correct, "wrong:", wrong)
        #expect(correct >= 8)
        #expect(wrong == 0)
    }

    /// The exogenous attack for real: each participant's published pressure series aligned with
    /// the public archive (every city, every shift). Under the old policy (weather dated and
    /// shifted) it recovers the true shift of every participant with a confident margin; under
    /// the shipped policy (`exogenous: drop`) there is nothing to align. Published as
    /// within-participant deltas without dates (the alternative the issue names), the sequence
    /// alone still aligns with the archive and gives the real dates: why the shipped policy drops.
    @Test func theWeatherArchiveAttackRecoversShiftsOnlyWhenWeatherIsPublished() throws {
        let old = try TimeAttackCohort(oldPolicy: true)
        defer { old.cleanup() }
        let bag = try old.export(createdAt: TimeAttackCohort.now.addingTimeInterval(190 * 86_400))
        let attacks = try #require(try DeidRiskService.timeAttacks(bag: bag, archive: TimeAttackCohort.archive))
        let truth = try old.truth()
        let found = attacks.candidates["exogenous"] ?? [:]
        let correct = truth.filter { found[$0.key] == [$0.value] }.count
        let wrong = found.filter { entry in truth[entry.key].map { entry.value != [$0] } ?? false }.count
        let outcome = attacks.outcomes.first { $0.attack == "exogenous" }
        print("weather archive, old policy: recovered \(outcome?.recovered ?? 0) of \(outcome?.assessed ?? 0), correct \(correct), wrong \(wrong)")
        // Everyone published (k over what an acquaintance knows leaves some out) is recovered.
        #expect((outcome?.assessed ?? 0) >= 10 && outcome?.recovered == outcome?.assessed && correct == outcome?.assessed && wrong == 0)
        // `cohort deid risk --weather-archive`: the same attack from an archive file.
        var archiveCSV = "station,kind,date,value\n"
        for (station, kinds) in TimeAttackCohort.archive.series {
            for (day, value) in kinds["barometric_pressure"] ?? [:] {
                archiveCSV += "\(station),barometric_pressure,\(CivilDate(daysSinceEpoch: day)),\(value)\n"
            }
        }
        let archiveURL = old.directory.appendingPathComponent("archive.csv")
        try Data(archiveCSV.utf8).write(to: archiveURL)
        let assessed = try DeidRiskService.assess(path: bag, archive: try DeidRiskService.readWeatherArchive(archiveURL))
        #expect(assessed.timeAttacks?.first { $0.attack == "exogenous" } == outcome)
        try Data("station,kind,date,value\nNY,barometric_pressure,2025-13-01,1000\n".utf8).write(to: archiveURL)
        let bad = #expect(throws: CohortError.self) { try DeidRiskService.readWeatherArchive(archiveURL) }
        #expect(bad?.location?.line == 2 && bad?.location?.field == "date")

        // Undated deltas: the old export's pressure values in time order, without their dates.
        let timelines = try DeidRiskService.readTimelines(bag)
        var undatedCorrect = 0
        for (pseudonym, rows) in timelines {
            let pressure = rows.filter { $0.kind == "barometric_pressure" }.sorted { $0.start < $1.start }
            let deltas = zip(pressure, pressure.dropFirst()).compactMap { a, b in b.value.flatMap { y in a.value.map { y - $0 } } }
            // The adversary integrates the deltas back into a series (any constant will do).
            let series = deltas.reduce(into: [0.0]) { $0.append($0[$0.count - 1] + $1) }
            let firstPublished = try #require(pressure.first.map { TimeAttacks.localDay($0.start, $0.offsetSeconds) })
            let match = TimeAttackCohort.archive.alignUndated(
                kind: "barometric_pressure", values: series,
                startDays: (TimeAttackCohort.firstDay.daysSinceEpoch - 190)...(TimeAttackCohort.lastDay.daysSinceEpoch))
            if let match, WeatherArchive.confident(r: match.r, runnerUp: match.runnerUp), firstPublished - match.firstDay == truth[pseudonym] {
                undatedCorrect += 1
            }
        }
        print("weather archive, undated deltas: real dates and shift recovered for \(undatedCorrect) of \(timelines.count)")
        #expect(undatedCorrect == timelines.count)

        let shipped = try TimeAttackCohort(oldPolicy: false)
        defer { shipped.cleanup() }
        let shippedBag = try shipped.export(createdAt: TimeAttackCohort.now.addingTimeInterval(190 * 86_400))
        let none = try #require(try DeidRiskService.timeAttacks(bag: shippedBag, archive: TimeAttackCohort.archive))
        let shippedOutcome = none.outcomes.first { $0.attack == "exogenous" }
        print("weather archive, shipped policy: recovered \(shippedOutcome?.recovered ?? 0) of \(shippedOutcome?.assessed ?? 0)")
        #expect(shippedOutcome?.assessed == 0 && shippedOutcome?.recovered == 0)
    }

    @Test func theAttacksFindNothingUnderTheShippedPolicy() throws {
        let cohort = try TimeAttackCohort(oldPolicy: false)
        defer { cohort.cleanup() }
        // At the end of the data (the embargo cuts) and half a year later (everything published).
        for createdAt in [TimeAttackCohort.now, TimeAttackCohort.now.addingTimeInterval(190 * 86_400)] {
            let bag = try cohort.export(createdAt: createdAt)
            let assessment = try DeidRiskService.assess(path: bag)
            let outcomes = assessment.timeAttacks ?? []
            print("shipped policy:", outcomes.map { "\($0.attack) \($0.recovered)/\($0.narrowed)/\($0.assessed)" })
            #expect(!outcomes.isEmpty)
            for outcome in outcomes {
                #expect(outcome.recovered == 0 && outcome.narrowed == 0, "\(outcome.attack): \(outcome)")
            }
            #expect(outcomes.first { $0.attack == "holiday" }.map { $0.assessed > 0 } == true)
            #expect(assessment.statedSignals == [], "consent signings are embargoed like records")
            print("acquaintance k:", assessment.acquaintanceK.map(String.init) ?? "-", assessment.warnings)
            // The export states the same k over the acquaintance attributes as deid risk recounts.
            let report = try JSONSerialization.jsonObject(with: Data(contentsOf: bag.appendingPathComponent("data/reports/deidentification.json"))) as? [String: Any]
            let k = report?["k_anonymity"] as? [String: Any]
            #expect(k?["record_quasi_identifiers"] as? [String] == ["device_class", "kinds", "active_days"])
            #expect(k?["record_achieved_k"] as? Int == assessment.acquaintanceK)
            #expect(k?["record_attributes_enforced"] as? Bool == true && !assessment.acquaintanceKOnlyStated)
            #expect(assessment.acquaintanceK.map { $0 >= 3 } == true && assessment.holds, "\(assessment.warnings)")
        }
    }
}
