import CohortCore
import CohortCrypto
import CohortDeid
import CohortKit
import CohortStore
import Foundation
import Testing
import CohortPackage

/// A generated cohort of 120 participants in zones with daylight saving (New York, Berlin,
/// Sydney), each with a daily step count over their local day (00:00 to 00:00) and a pain log
/// at 08:00 local, from 2026-02-20 to 2026-04-15: across the March transitions in New York and
/// Berlin and the April one in Sydney. Exported through ``ExportJob`` under the AxSpA protocol
/// (day shifts up to 182 days, a 182-day embargo). "Now" is 2026-04-20T12:00:00Z; exports are
/// created at ``exportedAt``, 200 days later, so the embargo leaves nothing out unless a test
/// says otherwise.
struct TimeZoneCohort {
    static let now = Date(timeIntervalSince1970: 1_776_686_400)  // 2026-04-20T12:00:00Z
    static let exportedAt = now.addingTimeInterval(200 * 86_400)
    static let zones = ["America/New_York", "Europe/Berlin", "Australia/Sydney"]
    static let participants = 120
    static let firstDay = CivilDate(year: 2026, month: 2, day: 20) ?? CivilDate(daysSinceEpoch: 0)
    static let lastDay = CivilDate(year: 2026, month: 4, day: 15) ?? CivilDate(daysSinceEpoch: 0)

    let directory: URL
    let workspace: Workspace
    let count: Int

    init(participants count: Int = Self.participants, extraRows: (String) -> String = { _ in "" }) throws {
        self.count = count
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tz-\(UUID().uuidString)")
        workspace = try Workspace.create(
            at: directory.appendingPathComponent("ws"),
            protocolURL: ImportFixture.repositoryRoot.appendingPathComponent("protocols/axspa-wearables.yaml"), actor: "test",
            now: { Self.now })
        let letters = Array("bcdfghjklmnpqrstvwxz")
        func surname(_ i: Int) -> String {
            "Q" + String([letters[i % 20], letters[i / 20 % 20], letters[i / 400 % 20]]) + "ow"
        }
        let entries = (0..<count).map { i in
            (
                RosterEntry(
                    code: String(format: "P-%04d", i + 1), name: "Tz \(surname(i))", timeZone: Self.zones[i % Self.zones.count],
                    enrolledOn: "2026-02-01"), line: Int?.none
            )
        }
        _ = try Roster(workspace: workspace).enroll(entries, file: nil, source: "test")
        let signed = Timestamp(epochMilliseconds: 1_769_940_000_000)  // 2026-02-01T10:00:00Z
        for i in 0..<count {
            _ = try ConsentService(workspace: workspace).record(
                code: String(format: "P-%04d", i + 1), version: "1.1", signedAt: signed, signature: "typed:Test", sharing: .broad)
        }
        // Wall-clock times without offset: the importer reads them in the participant's zone.
        var csv = "participant,kind,start,end,value\n"
        for i in 0..<count {
            let code = String(format: "P-%04d", i + 1)
            var day = Self.firstDay
            while day <= Self.lastDay {
                csv += "\(code),steps,\(day)T00:00:00,\(day.adding(days: 1))T00:00:00,\(4000 + i * 7 % 3000)\n"
                csv += "\(code),pain,\(day)T08:00:00,,\(i % 10)\n"
                day = day.adding(days: 1)
            }
            csv += extraRows(code)
        }
        let url = directory.appendingPathComponent("records.csv")
        try Data(csv.utf8).write(to: url)
        _ = try RecordImporter(workspace: workspace).importFile(url)
    }

    func cleanup() { try? FileManager.default.removeItem(at: directory) }

    /// Exports to a fresh folder: the bag directory (`archive: false`) or the archive.
    func export(createdAt: Date = Self.exportedAt, archive: Bool = false, recipient: String = "analyst") throws -> ExportOutcome {
        try ExportJob(
            workspace: workspace,
            options: ExportOptions(
                recipient: recipient, formats: [.csv, .json, .fhir], outDirectory: directory.appendingPathComponent("out-\(UUID().uuidString)"),
                createdAt: createdAt, archive: archive)
        ).run()
    }

    /// Every participant's real records, as the store keeps them (observed offsets).
    func storedRecords() throws -> [(id: UUID, records: [Record])] {
        try workspace.store.participants(withIdentities: false).map { stored in
            var records: [Record] = []
            try workspace.store.forEachRecord(stored.handle, participantID: stored.participant.id) { records.append($0) }
            return (stored.participant.id, records)
        }
    }
}

/// The adversary of issue #13: from published rows only, finds the days where a participant's
/// UTC offset changes, where a local-day aggregate is not 24 hours long, or where the UTC time of
/// day of a daily record steps by an hour; takes each as a daylight-saving transition moved by
/// the shift, and subtracts the public transition date of the same direction in the zones that
/// share the participant's standard offset.
enum DSTAttack {
    /// One published record: start, end (for aggregates), and whether it is the daily log.
    struct Row {
        var start: Timestamp
        var end: Timestamp?
        var daily: Bool
    }

    /// Direction of a transition: clocks forward (a 23-hour day) or back (25 hours).
    enum Direction: Hashable { case forward, back }

    /// Public transition dates (local calendar date in the zone) by standard offset and direction.
    static let transitions: [Int32: [Direction: [CivilDate]]] = {
        var result: [Int32: [Direction: [CivilDate]]] = [:]
        for name in TimeZoneCohort.zones {
            guard let zone = TimeZone(identifier: name) else { continue }
            var date = Date(timeIntervalSince1970: 1_704_067_200)  // 2024-01-01
            let standard = Int32(zone.secondsFromGMT(for: date) - Int(zone.daylightSavingTimeOffset(for: date)))
            while let next = zone.nextDaylightSavingTimeTransition(after: date), next.timeIntervalSince1970 < 1_830_297_600 {  // 2028
                let before = zone.secondsFromGMT(for: next.addingTimeInterval(-1))
                let after = zone.secondsFromGMT(for: next)
                let day = CivilDate(daysSinceEpoch: Int((next.timeIntervalSince1970 + Double(after)) / 86_400))
                result[standard, default: [:]][after > before ? .forward : .back, default: []].append(day)
                date = next
            }
        }
        return result
    }()

    /// The shifts the attacker can infer for each participant within `maxDays` of 0 (empty: none).
    static func candidates(_ rows: [String: [Row]], maxDays: Int) -> [String: Set<Int>] {
        var result: [String: Set<Int>] = [:]
        for (pseudonym, all) in rows {
            let sorted = all.sorted { $0.start < $1.start }
            var anomalies: [(CivilDate, Direction)] = []
            // 1. The offset the times are written at changes.
            for (a, b) in zip(sorted, sorted.dropFirst()) where a.start.utcOffsetSeconds != b.start.utcOffsetSeconds {
                anomalies.append((b.start.localDate, b.start.utcOffsetSeconds > a.start.utcOffsetSeconds ? .forward : .back))
            }
            // 2. A local-day aggregate is not 24 hours long (dated by its middle).
            for row in sorted {
                guard let end = row.end else { continue }
                let length = end.epochMilliseconds - row.start.epochMilliseconds
                guard length != 86_400_000 else { continue }
                let middle = Timestamp(
                    epochMilliseconds: row.start.epochMilliseconds + length / 2, utcOffsetSeconds: row.start.utcOffsetSeconds)
                anomalies.append((middle.localDate, length < 86_400_000 ? .forward : .back))
            }
            // 3. The UTC time of day of the daily log steps by an hour between consecutive days.
            let daily = sorted.filter(\.daily)
            for (a, b) in zip(daily, daily.dropFirst()) {
                let step = b.start.epochMilliseconds % 86_400_000 - a.start.epochMilliseconds % 86_400_000
                if abs(step) == 3_600_000 { anomalies.append((b.start.localDate, step < 0 ? .forward : .back)) }
            }
            // The participant's standard offset: the published one, or the smallest seen.
            let standard = sorted.map(\.start.utcOffsetSeconds).min() ?? 0
            var inferred: Set<Int> = []
            for (day, direction) in anomalies {
                for transition in transitions[standard]?[direction] ?? [] {
                    let shift = day.daysSinceEpoch - transition.daysSinceEpoch
                    if abs(shift) <= maxDays { inferred.insert(shift) }
                }
            }
            result[pseudonym] = inferred
        }
        return result
    }

    /// The rows of the published CSV tables of a bag's `data/csv`: steps from biometrics.csv,
    /// pain from symptom_logs.csv, by pseudonym.
    static func publishedRows(csvDirectory: URL) throws -> [String: [Row]] {
        var rows: [String: [Row]] = [:]
        for (file, daily) in [("biometrics.csv", false), ("symptom_logs.csv", true)] {
            let text = try String(contentsOf: csvDirectory.appendingPathComponent(file), encoding: .utf8)
            let lines = text.split(whereSeparator: \.isNewline).map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
            guard let header = lines.first, let p = header.firstIndex(of: "pseudonym"), let s = header.firstIndex(of: "start"),
                let e = header.firstIndex(of: "end")
            else { throw CohortError.invalid("expected pseudonym, start and end columns", field: file) }
            for cells in lines.dropFirst() {
                guard let start = Timestamp.parse(cells[s], defaultTimeZone: nil) else {
                    throw CohortError.invalid("expected an ISO 8601 start", field: file)
                }
                rows[cells[p], default: []].append(Row(start: start, end: Timestamp.parse(cells[e], defaultTimeZone: nil), daily: daily))
            }
        }
        return rows
    }

    /// The offsets in participants.csv's `utc_offset` column, by pseudonym.
    static func publishedOffsets(csvDirectory: URL) throws -> [String: String] {
        let text = try String(contentsOf: csvDirectory.appendingPathComponent("participants.csv"), encoding: .utf8)
        let lines = text.split(whereSeparator: \.isNewline).map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        guard let header = lines.first, let p = header.firstIndex(of: "pseudonym"), let o = header.firstIndex(of: "utc_offset") else {
            throw CohortError.invalid("expected pseudonym and utc_offset columns", field: "participants.csv")
        }
        return Dictionary(lines.dropFirst().map { ($0[p], $0[o]) }, uniquingKeysWith: { a, _ in a })
    }
}

struct ExportJobTimeZoneTests {
    /// Issue 27: one shift per participant for every recipient (two recipients who compare learn
    /// no shift difference), pseudonyms per recipient.
    @Test func twoRecipientsSeeTheSameShiftUnderDifferentPseudonyms() throws {
        let cohort = try TimeZoneCohort(participants: 12)
        defer { cohort.cleanup() }
        let keys = cohort.workspace.keystore
        var published: [String: [String: [DSTAttack.Row]]] = [:]
        for recipient in ["analyst", "registry"] {
            let outcome = try cohort.export(recipient: recipient)
            published[recipient] = try DSTAttack.publishedRows(csvDirectory: try #require(outcome.bagDirectory).appendingPathComponent("data/csv"))
        }
        let a = Pseudonymizer(recipientKey: try keys.recipientKey(for: "analyst"))
        let b = Pseudonymizer(recipientKey: try keys.recipientKey(for: "registry"))
        var compared = 0
        for stored in try cohort.workspace.store.participants(withIdentities: false) {
            let (pa, pb) = (a.pseudonym(for: stored.participant.id), b.pseudonym(for: stored.participant.id))
            #expect(pa != pb)
            guard let rowsA = published["analyst"]?[pa], let rowsB = published["registry"]?[pb] else { continue }
            #expect(published["registry"]?[pa] == nil && published["analyst"]?[pb] == nil)
            let startsA = rowsA.map(\.start).sorted()
            let startsB = rowsB.map(\.start).sorted()
            #expect(!startsA.isEmpty && startsA == startsB, "the same published dates for both recipients")
            compared += 1
        }
        #expect(compared >= 9)
    }

    @Test func theDSTAttackOnAPublishedExportInfersNothing() throws {
        let cohort = try TimeZoneCohort()
        defer { cohort.cleanup() }
        let outcome = try cohort.export()
        let csv = try #require(outcome.bagDirectory).appendingPathComponent("data/csv")
        let rows = try DSTAttack.publishedRows(csvDirectory: csv)
        // k-anonymity may leave a few participants out (their ids, hence shifts, are random).
        let suppressed = outcome.exclusions["suppressed for k-anonymity", default: 0]
        #expect(rows.count == TimeZoneCohort.participants - suppressed && suppressed <= TimeZoneCohort.participants / 20)
        let offsets = try DSTAttack.publishedOffsets(csvDirectory: csv)
        #expect(Set(offsets.values) == ["-05:00", "+01:00", "+10:00"])
        for (pseudonym, published) in rows {
            // One offset per participant, the one participants.csv names.
            let written = Set(published.flatMap { [$0.start] + ($0.end.map { [$0] } ?? []) }.map(\.utcOffsetSeconds))
            #expect(written.count == 1)
            #expect(written.map(ParticipantShiftText.text) == [offsets[pseudonym]])
        }
        let inferred = DSTAttack.candidates(rows, maxDays: 182)
        // Every inference points at a shift of 0, which the range [-182, -1] does not hold:
        // whatever the true shift, the attacker learns the same thing from every participant,
        // i.e. nothing.
        for (pseudonym, candidates) in inferred {
            #expect(candidates.isSubset(of: [0]), "participant \(pseudonym): the attack narrowed the shift to \(candidates.sorted())")
        }
        // And the detector does fire: exactly for the participants whose shifted days hold one
        // of their zone's public transitions (the shifted calendar's own), worked out here from
        // the true shifts the attacker does not have.
        let key = try cohort.workspace.keystore.recipientKey(for: "analyst")
        let shifter = try DateShifter(key: try cohort.workspace.keystore.dateShiftKey(), maxDays: 182, wholeWeeks: false)
        let pseudonymizer = Pseudonymizer(recipientKey: key)
        var expectedFiring = 0
        for stored in try cohort.workspace.store.participants(withIdentities: false) {
            let participant = stored.participant
            let days = shifter.offset(for: participant.id)
            let zone = try #require(TimeZone(identifier: participant.timeZone))
            let standard = Int32(zone.secondsFromGMT(for: TimeZoneCohort.now) - Int(zone.daylightSavingTimeOffset(for: TimeZoneCohort.now)))
            let first = TimeZoneCohort.firstDay.adding(days: days)
            let last = TimeZoneCohort.lastDay.adding(days: days)
            let transitions = (DSTAttack.transitions[standard] ?? [:]).values.joined()
            let fires = transitions.contains { $0 >= first && $0 <= last }
            if fires { expectedFiring += 1 }
            let pseudonym = pseudonymizer.pseudonym(for: participant.id)
            guard rows[pseudonym] != nil else { continue }  // left out for k-anonymity
            #expect((inferred[pseudonym] == [0]) == fires, "participant \(pseudonym)")
        }
        #expect(expectedFiring > 0)
        // Local days stay local days, in the shifted calendar.
        let lengths = Set(rows.values.joined().compactMap { row in row.end.map { $0.epochMilliseconds - row.start.epochMilliseconds } })
        #expect(lengths.isSubset(of: [82_800_000, 86_400_000, 90_000_000]))
    }

    @Test func theSameAttackRecoversShiftsMadeTheOldWay() throws {
        let cohort = try TimeZoneCohort()
        defer { cohort.cleanup() }
        // The old path: every instant + d · 24 h, written at the offset observed at import.
        var g = SeededRandom(seed: 13)
        var truth: [String: Int] = [:]
        var rows: [String: [DSTAttack.Row]] = [:]
        for (id, records) in try cohort.storedRecords() {
            let shift = -7 * Int.random(in: 1...26, using: &g)
            let name = id.uuidString
            truth[name] = shift
            rows[name] = records.map { r in
                DSTAttack.Row(start: r.start.adding(days: shift), end: r.end?.adding(days: shift), daily: r.kind == .pain)
            }
        }
        let inferred = DSTAttack.candidates(rows, maxDays: 182)
        let recovered = truth.filter { inferred[$0.key] == [$0.value] }.count
        #expect(recovered >= TimeZoneCohort.participants * 9 / 10, "the attack recovered \(recovered) of \(truth.count) shifts")
        print("DST attack on shifts made the old way: recovered \(recovered) of \(truth.count)")
    }

    /// Issue 27: nothing is published dated after the creation minus the protocol's embargo (182
    /// days for AxSpA), so a participant whose data run up to the export does not have their
    /// shift bounded by their last record. (The rule was "after the creation" with whole-week
    /// shifts; updated on purpose.)
    @Test func nothingPublishedIsAfterTheEmbargoHorizon() throws {
        let hourAgo = Timestamp(epochMilliseconds: Int64(TimeZoneCohort.now.timeIntervalSince1970) * 1000 - 3_600_000)
        let cohort = try TimeZoneCohort(participants: 24) { code in code == "P-0001" ? "\(code),pain,\(hourAgo.iso8601),,3\n" : "" }
        defer { cohort.cleanup() }
        let later = try cohort.export(archive: true)
        let all = try Self.published(later)
        #expect(all.rows > 24 * 55 * 2)
        #expect(later.report.dateShift.leftOutAfterCreation.isEmpty)

        let now = try cohort.export(createdAt: TimeZoneCohort.now)
        let csvDirectory = try #require(now.bagDirectory).appendingPathComponent("data/csv")
        let rows = try DSTAttack.publishedRows(csvDirectory: csvDirectory)
        let horizon = Int64(TimeZoneCohort.now.timeIntervalSince1970) * 1000 - 182 * 86_400_000
        for row in rows.values.joined() { #expect((row.end ?? row.start).epochMilliseconds <= horizon) }
        // Not vacuous: recomputed from the true shifts, every participant whose shifted first day
        // lies well before the horizon has rows unless k-anonymity suppressed them whole, and one
        // whose shifted first day lies after it has none. (Whether any is published is chance:
        // the keys, hence shifts and suppression, are random; the agreement is exact.)
        let published = Set(try DSTAttack.publishedOffsets(csvDirectory: csvDirectory).keys)
        let shifter = try DateShifter(key: try cohort.workspace.keystore.dateShiftKey(), maxDays: 182, wholeWeeks: false)
        let pseudonymizer = Pseudonymizer(recipientKey: try cohort.workspace.keystore.recipientKey(for: "analyst"))
        let horizonDay = CivilDate(daysSinceEpoch: Int(horizon / 86_400_000))
        for stored in try cohort.workspace.store.participants(withIdentities: false) {
            let first = TimeZoneCohort.firstDay.adding(days: shifter.offset(for: stored.participant.id))
            let pseudonym = pseudonymizer.pseudonym(for: stored.participant.id)
            if first <= horizonDay.adding(days: -2) && published.contains(pseudonym) {
                #expect(rows[pseudonym] != nil, "a participant with data before the horizon has rows")
            } else if first > horizonDay.adding(days: 1) {
                #expect(rows[pseudonym] == nil, "a participant with no data before the horizon has none")
            }
        }
        let leftOut = now.report.dateShift.leftOutAfterCreation["records"] ?? 0
        #expect(leftOut > 0)
        // (No count identity with `later`: enrollment dates emptied past the horizon change the
        // k-anonymity classes, hence who is suppressed.)
        #expect(now.report.dateShift.rangeDays == [-182, -1])
        #expect(now.report.dateShift.embargoDays == 182)
    }

    /// The manifest's creation instant, and the latest date or instant written in any CSV, JSON or
    /// FHIR file of the archive that is a participant's (study-level dates such as the IRB
    /// approval's expiry are not shifted dates and are skipped: `study.json`, `ResearchStudy`).
    static func published(_ outcome: ExportOutcome) throws -> (createdAt: Timestamp, latest: Timestamp, rows: Int) {
        let manifestURL = try #require(outcome.manifestURL)
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: manifestURL)) as? [String: Any]
        let createdAt = try #require((manifest?["created_at"] as? String).flatMap { Timestamp.parse($0, defaultTimeZone: nil) })
        let archive = try #require(outcome.archive?.url)
        let folder = archive.deletingLastPathComponent().appendingPathComponent("extracted-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let tar = Process()
        tar.executableURL = URL(fileURLWithPath: "/usr/bin/tar")
        tar.arguments = ["-xzf", archive.path, "-C", folder.path]
        try tar.run()
        tar.waitUntilExit()
        #expect(tar.terminationStatus == 0)
        let pattern = try Regex(#"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?"#)
        var latest = Timestamp(epochMilliseconds: .min)
        var rows = 0
        func check(_ text: String) {
            for match in text.matches(of: pattern) {
                // A bare date is the whole day: its start must not be after the creation instant.
                guard let instant = Timestamp.parse(String(text[match.range]), defaultTimeZone: TimeZone(secondsFromGMT: 0)) else { continue }
                latest = max(latest, instant)
            }
        }
        func walk(_ value: Any) {
            switch value {
            case let object as [String: Any]:
                // The study's own dates (IRB approval period) are not a participant's.
                guard object["resourceType"] as? String != "ResearchStudy" else { return }
                object.values.forEach(walk)
            case let array as [Any]: array.forEach(walk)
            case let text as String: check(text)
            default: break
            }
        }
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        for file in files where ["csv", "json", "ndjson"].contains(file.pathExtension) {
            let name = file.lastPathComponent
            guard file.path.contains("/data/"), !file.path.contains("/reports/"), name != "study.json", name != "datapackage.json"
            else { continue }
            let text = try String(contentsOf: file, encoding: .utf8)
            switch file.pathExtension {
            case "csv":
                rows += text.split(whereSeparator: \.isNewline).count
                check(text)
            case "ndjson":
                for line in text.split(whereSeparator: \.isNewline) {
                    rows += 1
                    walk(try JSONSerialization.jsonObject(with: Data(line.utf8)))
                }
            default: walk(try JSONSerialization.jsonObject(with: Data(text.utf8)))
            }
        }
        return (createdAt, latest, rows)
    }
}

/// The `utc_offset` text of an offset in seconds, written independently of the library.
enum ParticipantShiftText {
    static func text(_ seconds: Int32) -> String {
        let sign = seconds < 0 ? "-" : "+"
        let minutes = abs(Int(seconds)) / 60
        return sign + String(format: "%02d:%02d", minutes / 60, minutes % 60)
    }
}
