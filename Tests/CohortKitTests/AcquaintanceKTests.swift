import CohortCore
import CohortDeid
import Foundation
import Testing

@testable import CohortKit
import CohortStore

/// Issue 27: true k ≥ the manifest's k over what an acquaintance knows, on an export of each
/// shipped protocol with k-anonymity, recomputed from the published files by a route of its own
/// (an acquaintance's view: the participant's row, the kinds and device classes in every table
/// that names them, the local dates they were active) rather than the export's code.
struct AcquaintanceKTests {
    static let now = Date(timeIntervalSince1970: 1_769_947_200)  // 2026-02-01T12:00:00Z
    static let lastDay = CivilDate(year: 2026, month: 1, day: 30) ?? CivilDate(daysSinceEpoch: 0)
    static let devices: [String: [String]] = [
        "axspa-wearables": ["Apple Watch", "Fitbit Charge", "Garmin Venu", "Oura Ring"], "active-living": ["Apple Watch", "iPhone", "Oura Ring"],
        "migraine-risk": ["Apple Watch", "iPhone"],
    ]

    /// A workspace on the shipped protocol `name` (optionally with `record_attributes` set),
    /// 36 participants in three zones who each record what their device writes (each of the
    /// protocol's devices lacks some kinds) and, one in three, each kind logged by hand (every
    /// fourth), for 30 to 90 days to `lastDay`.
    static func cohort(_ name: String, recordAttributes: String? = nil) throws -> (directory: URL, workspace: Workspace) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("acq-\(UUID().uuidString)")
        let fm = FileManager.default
        try fm.createDirectory(at: directory.appendingPathComponent("protocols"), withIntermediateDirectories: true)
        try fm.createSymbolicLink(
            at: directory.appendingPathComponent("templates"), withDestinationURL: ImportFixture.repositoryRoot.appendingPathComponent("templates"))
        var text = try String(contentsOf: ImportFixture.repositoryRoot.appendingPathComponent("protocols/\(name).yaml"), encoding: .utf8)
        if let recordAttributes {
            let range = try #require(text.range(of: "  k_anonymity:\n"))
            text.insert(contentsOf: "    record_attributes: \(recordAttributes)\n", at: range.upperBound)
        }
        let url = directory.appendingPathComponent("protocols/study.yaml")
        try Data(text.utf8).write(to: url)
        let workspace = try Workspace.create(at: directory.appendingPathComponent("ws"), protocolURL: url, actor: "test", now: { Self.now })
        let p = try workspace.currentProtocol().studyProtocol
        let zones = ["America/New_York", "Europe/Berlin", "Australia/Sydney"]
        let count = 36
        let entries = (0..<count).map { i in
            (
                RosterEntry(
                    code: String(format: "P-%04d", i + 1), name: "At Qu\(["b", "c", "d", "f", "g"][i % 5])\(["k", "l", "m", "n", "p", "r"][i / 5 % 6])o",
                    birthDate: "19\(60 + i % 30)-0\(1 + i % 9)-15", sex: i % 2 == 0 ? "female" : "male", zip: ["10027", "10115", "60614", "02139"][i % 4],
                    timeZone: zones[i % zones.count], enrolledOn: Self.lastDay.adding(days: -89).description), line: Int?.none
            )
        }
        _ = try Roster(workspace: workspace).enroll(entries, file: nil, source: "test")
        for i in 0..<count {
            _ = try ConsentService(workspace: workspace).record(
                code: String(format: "P-%04d", i + 1), version: p.consent.currentVersion,
                signedAt: Timestamp(epochMilliseconds: Int64(Self.lastDay.adding(days: -89).daysSinceEpoch) * 86_400_000 + 18 * 3_600_000), signature: "typed:Test",
                sharing: .broad)
        }
        let kinds = p.dataTypes.values.flatMap { $0 }.filter { !p.deidentification.dateShift.isExogenous($0) }.sorted { $0.rawValue < $1.rawValue }
        var g = SeededRandom(seed: 27)
        var csv = "participant,kind,start,end,value,text,source\n"
        let devices = Self.devices[p.id] ?? ["Apple Watch"]
        for i in 0..<count {
            // What a device writes (each lacks some kinds), and every fourth kind logged by hand by some.
            let chosen = kinds.enumerated().filter { index, _ in
                index % (devices.count + 1) != i % devices.count + 1 && (index % 4 != 3 || Int.random(in: 0..<3, using: &g) == 0)
            }.map(\.element)
            let device = devices[i % devices.count]
            let days = 30 + i * 37 % 61
            for d in 0..<days {
                let day = Self.lastDay.adding(days: -d)
                for kind in chosen {
                    let value = (kind.range.lowerBound + (kind.range.upperBound - kind.range.lowerBound) * 0.1).rounded()
                    csv += "P-\(String(format: "%04d", i + 1)),\(kind.rawValue),\(day)T09:00:00,\(day)T23:00:00,\(value),\(kind == .medicationDose ? "naproxen" : ""),\(device)\n"
                }
            }
        }
        let records = directory.appendingPathComponent("records.csv")
        try Data(csv.utf8).write(to: records)
        _ = try RecordImporter(workspace: workspace).importFile(records)
        return (directory, workspace)
    }

    static func export(_ workspace: Workspace, in directory: URL, createdAt: Date) throws -> ExportOutcome {
        try ExportJob(
            workspace: workspace,
            options: ExportOptions(
                recipient: "analyst", formats: [.csv], outDirectory: directory.appendingPathComponent("out-\(UUID().uuidString)"),
                createdAt: createdAt, archive: false)
        ).run()
    }

    /// The acquaintance's k: classes over every column of participants.csv but the pseudonym,
    /// the kinds and device classes (`source`) each pseudonym has in any published table, and
    /// the number of local dates it was active in bands of 90 days.
    static func acquaintanceK(_ bag: URL) throws -> (k: Int, participants: Int) {
        let csv = bag.appendingPathComponent("data/csv")
        func table(_ file: String) throws -> (header: [String], rows: [[String]]) {
            let lines = Self.rows(try String(contentsOf: csv.appendingPathComponent(file), encoding: .utf8))
            return (lines.first ?? [], Array(lines.dropFirst()))
        }
        let participants = try table("participants.csv")
        let key = try #require(participants.header.firstIndex(of: "pseudonym"))
        var kinds: [String: Set<String>] = [:], sources: [String: Set<String>] = [:], dates: [String: Set<String>] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: csv.path) where file.hasSuffix(".csv") && file != "participants.csv" {
            let t = try table(file)
            guard let p = t.header.firstIndex(of: "pseudonym"), let k = t.header.firstIndex(of: "kind") else { continue }
            let date = t.header.firstIndex(of: "start") ?? t.header.firstIndex(of: "date")
            let source = t.header.firstIndex(of: "source")
            for row in t.rows {
                kinds[row[p], default: []].insert(row[k])
                if let source, !row[source].isEmpty { sources[row[p], default: []].insert(row[source]) }
                if let date, !row[date].isEmpty { dates[row[p], default: []].insert(String(row[date].prefix(10))) }
            }
        }
        var classes: [[String]: Int] = [:]
        for row in participants.rows {
            let pseudonym = row[key]
            let columns = row.enumerated().filter { $0.offset != key }.map(\.element)
            let known = [
                kinds[pseudonym, default: []].sorted().joined(separator: ";"), sources[pseudonym, default: []].sorted().joined(separator: ";"),
                String((dates[pseudonym]?.count ?? 0) / 90),
            ]
            classes[columns + known, default: 0] += 1
        }
        return (classes.values.min() ?? 0, participants.rows.count)
    }

    /// RFC 4180 rows (quoted fields, doubled quotes, CRLF or LF), read here rather than by
    /// cohort's reader.
    static func rows(_ text: String) -> [[String]] {
        var rows: [[String]] = [], row: [String] = [], field = "", quoted = false, afterQuote = false
        for c in text {
            if quoted {
                if c == "\"" { quoted = false; afterQuote = true } else { field.append(c) }
                continue
            }
            switch c {
            case "\"": if afterQuote { field.append("\"") }; quoted = true
            case ",": row.append(field); field = ""
            case "\r\n", "\n": row.append(field); rows.append(row); row = []; field = ""
            case "\r": break
            default: field.append(c)
            }
            afterQuote = false
        }
        if !field.isEmpty || !row.isEmpty { row.append(field); rows.append(row) }
        return rows
    }

    static func kSection(_ url: URL) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
        return try #require(object?["k_anonymity"] as? [String: Any])
    }

    @Test(arguments: ["axspa-wearables", "active-living", "migraine-risk"])
    func trueKHoldsOnEveryShippedProtocol(_ name: String) throws {
        let (directory, workspace) = try Self.cohort(name)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Half a year after the data (everything publishable) and at its end (the embargo cuts).
        for createdAt in [Self.now.addingTimeInterval(200 * 86_400), Self.now] {
            let outcome = try Self.export(workspace, in: directory, createdAt: createdAt)
            let bag = try #require(outcome.bagDirectory)
            // The manifest's k-anonymity section is made from this one (ExportManifest.KAnonymity(_:)).
            let report = try Self.kSection(bag.appendingPathComponent("data/reports/deidentification.json"))
            let manifest = report
            let requested = try #require(manifest["requested_k"] as? Int)
            let measured = try Self.acquaintanceK(bag)
            print(
                "\(name) at +\(Int(createdAt.timeIntervalSince(Self.now) / 86_400)) days: true k \(measured.k), manifest k \(requested),",
                "published \(measured.participants) of 36, kinds left out \(report["record_kinds_left_out"] ?? "-") (records \(report["records_left_out"] ?? "-")),",
                "device class published \(report["device_class_published"] ?? "-"), suppressed \(report["suppressed_participants"] ?? "-"),",
                "generalized \(report["generalized"] ?? "-")")
            #expect(manifest["record_quasi_identifiers"] as? [String] == ["device_class", "kinds", "active_days"])
            #expect(manifest["record_attributes_enforced"] as? Bool == true)
            guard measured.participants > 0 else { continue }
            #expect(measured.k >= requested, "true k \(measured.k) below the manifest's \(requested)")
            #expect(manifest["record_achieved_k"] as? Int == measured.k && report["record_achieved_k"] as? Int == measured.k)
            // Little loss: generalizing the records leaves at most one in six participants out.
            #expect(measured.participants * 6 >= 36 * 5 || createdAt == Self.now, "\(measured.participants) of 36 published")
            let assessment = try DeidRiskService.assess(path: bag)
            #expect(assessment.acquaintanceK == measured.k && !assessment.acquaintanceKOnlyStated, "deid risk: \(assessment.acquaintanceK.map(String.init) ?? "-")")
        }
    }

    /// An export the embargo leaves without a single record (created 100 days before the data's
    /// end: every shifted date lies after creation minus 182 days): `deid risk` still states the
    /// acquaintance's k — the participant columns' k, as nothing is known from records — and it
    /// is the one recounted here. (It said nothing, and the check above failed whenever random
    /// shifts put every record of the cohort past the horizon.)
    @Test func acquaintanceKIsStatedWhenNoRecordIsPublished() throws {
        let (directory, workspace) = try Self.cohort("axspa-wearables")
        defer { try? FileManager.default.removeItem(at: directory) }
        let outcome = try Self.export(workspace, in: directory, createdAt: Self.now.addingTimeInterval(-100 * 86_400))
        let bag = try #require(outcome.bagDirectory)
        let timelines = try DeidRiskService.readTimelines(bag)
        #expect(timelines.isEmpty, "the embargo left every record out")
        let measured = try Self.acquaintanceK(bag)
        let assessment = try DeidRiskService.assess(path: bag)
        #expect(measured.participants > 0)
        #expect(assessment.acquaintanceK == measured.k && assessment.acquaintanceK == assessment.risk.k)
    }

    /// The same cohort with `record_attributes: state` (the default before): the recount finds
    /// k below the manifest's, so the check above can fail.
    @Test func statedOnlyFallsShort() throws {
        let (directory, workspace) = try Self.cohort("active-living", recordAttributes: "state")
        defer { try? FileManager.default.removeItem(at: directory) }
        let outcome = try Self.export(workspace, in: directory, createdAt: Self.now.addingTimeInterval(200 * 86_400))
        let measured = try Self.acquaintanceK(try #require(outcome.bagDirectory))
        let manifest = try Self.kSection(try #require(outcome.bagDirectory).appendingPathComponent("data/reports/deidentification.json"))
        print("active-living, stated only: true k \(measured.k), published \(measured.participants)")
        #expect(measured.k < 3 && manifest["record_achieved_k"] as? Int == measured.k && manifest["record_attributes_enforced"] as? Bool == false)
    }
}
