import CohortCore
import Foundation
import Synchronization
import Testing

@testable import CohortKit
import CohortCompliance
import CohortDeid
import CohortPackage
import CohortStore

/// Every count the study report shows, against a second computation: SQL over study.db through
/// the sqlite3 tool, compliance recomputed here from the raw rows with Foundation's calendar, and
/// k recomputed from the published participants.csv.
struct StudyReportServiceTests {
    @Test func totalsWithdrawalsAndConsentsMatchSQL() throws {
        let (workspace, demo) = try ReportFixture.workspace()
        let report = try StudyReportService(workspace: workspace).report(asOf: demo.now)

        let enrolled = try ReportFixture.sql(demo, "SELECT count(*) FROM participants")
        #expect(report.totals.enrolled == Int(enrolled[0][0]))
        let withdrawn = try ReportFixture.sql(demo, "SELECT count(*) FROM participants WHERE status <> 'active'")
        #expect(report.totals.withdrawn == Int(withdrawn[0][0]) && report.totals.withdrawn == 2)
        #expect(report.totals.records == Int(try ReportFixture.sql(demo, "SELECT count(*) FROM records")[0][0]))
        #expect(report.totals.consents == Int(try ReportFixture.sql(demo, "SELECT count(*) FROM consents")[0][0]))

        // Withdrawals by mode and by whom: the latest withdrawal row of each participant.
        let modes = try ReportFixture.sql(
            demo,
            """
            SELECT mode, count(*), sum(by_kind = 'participant'), sum(by_kind = 'staff') FROM withdrawals w
            WHERE w.rowid = (SELECT rowid FROM withdrawals v WHERE v.participant_pk = w.participant_pk ORDER BY at_ms DESC, rowid DESC LIMIT 1)
            GROUP BY mode ORDER BY mode
            """)
        let shown = report.withdrawals.sorted { $0.mode.rawValue < $1.mode.rawValue }.map { [$0.mode.rawValue, "\($0.total)", "\($0.byParticipant)", "\($0.byStaff)"] }
        #expect(shown == modes)
        #expect(shown.map(\.first) == ["erase", "exclude"])

        // Consent versions in force and re-consents.
        let inForce = try ReportFixture.sql(demo, "SELECT version, count(*) FROM consents WHERE status = 'active' GROUP BY version ORDER BY version")
        #expect(report.consentVersions.filter { $0.inForce > 0 }.sorted { $0.version < $1.version }.map { [$0.version, "\($0.inForce)"] } == inForce)
        let reconsents = try ReportFixture.sql(demo, "SELECT count(*) - count(DISTINCT participant_pk) FROM consents")
        #expect(report.reconsents == Int(reconsents[0][0]) && report.reconsents == 1)

        // Enrollment per week adds up to the roster.
        #expect(report.enrollment.last?.cumulative == report.totals.enrolled)
        #expect(report.enrollment.reduce(0) { $0 + $1.enrolled } == report.totals.enrolled)
        #expect(report.enrollment.allSatisfy { $0.weekStart.isoWeekday == 1 })
    }

    @Test func belowThresholdAndHeatmapMatchAnIndependentRecount() throws {
        let (workspace, demo) = try ReportFixture.workspace()
        let report = try StudyReportService(workspace: workspace).report(asOf: demo.now)
        let p = try workspace.currentProtocol().studyProtocol

        // Recount: participant-days met per rule from the raw rows, local days by Foundation's calendar.
        let people = try ReportFixture.sql(demo, "SELECT pk, code, time_zone, enrolled_on, status, coalesce(withdrawn_at_ms, '') FROM participants WHERE status <> 'erased'")
        let records = try ReportFixture.sql(demo, "SELECT participant_pk, kind, start_ms FROM records")
        func dayNumber(_ ms: Int64, _ zone: TimeZone) -> Int {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            let parts = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(ms) / 1000))
            var utc = Calendar(identifier: .gregorian)
            utc.timeZone = TimeZone(identifier: "UTC") ?? .gmt
            let midnight = utc.date(from: DateComponents(year: parts.year, month: parts.month, day: parts.day)) ?? Date(timeIntervalSince1970: 0)
            return Int((midnight.timeIntervalSince1970 / 86_400).rounded())
        }
        var expectedBelow: Set<String> = []
        var expectedMet: [String: Int] = [:]
        for (ruleIndex, rule) in p.compliance.rules.enumerated() {
            let kinds = Set(rule.countedKinds(in: p).map(\.rawValue))
            for person in people {
                let zone = try #require(TimeZone(identifier: person[2]))
                let enrolled = try #require(CivilDate(iso: person[3])).daysSinceEpoch
                var last = min(dayNumber(Int64(demo.now.timeIntervalSince1970 * 1000), zone) - 1, enrolled + p.durationDays - 1)
                if let withdrawn = Int64(person[5]) { last = min(last, dayNumber(withdrawn, zone) - 1) }
                guard last >= enrolled else { continue }
                var perDay: [Int: Int] = [:]
                for r in records where r[0] == person[0] && kinds.contains(r[1]) {
                    let day = dayNumber(Int64(r[2]) ?? 0, zone)
                    if day >= enrolled && day <= last { perDay[day, default: 0] += 1 }
                }
                let met = perDay.values.filter { $0 >= max(1, rule.minPerDay) }.count
                expectedMet["\(ruleIndex) \(person[1])"] = met
                if Double(met) / Double(last - enrolled + 1) < rule.threshold { expectedBelow.insert("\(rule.id) \(person[1])") }
            }
        }
        #expect(Set(report.belowThreshold.map { "\($0.ruleID) \($0.code)" }) == expectedBelow)
        #expect(!expectedBelow.isEmpty, "the demo has participants below a threshold")
        for (index, rule) in report.rules.enumerated() {
            var drawn: [String: Int] = [:]
            for row in rule.heatmap { drawn["\(index) \(row.code)"] = row.days.filter { $0 }.count }
            #expect(drawn == expectedMet.filter { $0.key.hasPrefix("\(index) ") })
            // The trend pools the same participant-days.
            #expect(rule.trend.reduce(0) { $0 + $1.daysMet } == drawn.values.reduce(0, +))
            // Below-threshold counts in the summary agree with the list.
            let s = rule.summary
            #expect(s.participants - s.notApplicable - s.compliantCount == report.belowThreshold.filter { $0.ruleID == s.ruleID }.count)
        }
    }

    @Test func exportSectionComesFromTheVerifierAndThePublishedFiles() throws {
        let (workspace, demo) = try ReportFixture.workspace()
        let report = try StudyReportService(workspace: workspace).report(asOf: demo.now, archive: demo.archive)
        let export = try #require(report.export)
        #expect(export.verification.passed)
        #expect(export.verification.check(named: "residual PII scan")?.passed == true)
        #expect(report.exportVerified == true)
        let k = try #require(export.manifest?.kAnonymity)
        let deid = try #require(export.deidentification)
        #expect(deid.kAnonymity?.achievedK == k.achievedK)

        // k recomputed from the published participants.csv over the stated quasi-identifiers.
        let bag = try ReportFixture.unpack(demo.archive)
        defer { try? FileManager.default.removeItem(at: bag.deletingLastPathComponent()) }
        let rows = try ReportFixture.csv(bag.appendingPathComponent("data/csv/participants.csv"))
        let header = try #require(rows.first)
        let columns = try k.quasiIdentifiers.map { name in try #require(header.firstIndex(of: name), "QI \(name) is a published column") }
        var classes: [[String]: Int] = [:]
        for row in rows.dropFirst() { classes[columns.map { row[$0] }, default: 0] += 1 }
        #expect(k.achievedK == classes.values.min())
        #expect(k.classes == classes.count)
        // The manifest lists the same participants.csv the archive holds.
        #expect(export.manifest?.files.first { $0.path == "data/csv/participants.csv" }?.rows == rows.count - 1)
    }

    @Test func aTamperedArchiveIsReportedAsNotVerified() throws {
        let (workspace, demo) = try ReportFixture.workspace()
        let folder = try ReportFixture.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent(demo.archive.lastPathComponent)
        var bytes = try Data(contentsOf: demo.archive)
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: copy)
        let manifest = demo.archive.deletingPathExtension().deletingPathExtension().appendingPathExtension("manifest.json")
        try FileManager.default.copyItem(at: manifest, to: folder.appendingPathComponent(manifest.lastPathComponent))
        try FileManager.default.copyItem(at: URL(fileURLWithPath: manifest.path + ".sig"), to: folder.appendingPathComponent(manifest.lastPathComponent + ".sig"))
        let report = try StudyReportService(workspace: workspace).report(asOf: demo.now, archive: copy)
        #expect(report.exportVerified == false)
        #expect(report.export?.verification.check(named: "archive digest")?.passed == false)
        // The signature over the untouched manifest still verifies: the page says which part failed.
        #expect(report.export?.verification.check(named: "signature")?.passed == true)
        #expect(report.html().contains("NOT verified"))
    }
}

extension StudyReportServiceTests {
    /// The export section reads the archive once: its progress ends at the archive's size (it went
    /// to twice the size when the de-identification report was read in a second pass), its checks
    /// are exactly `cohort verify`'s with the workspace, and the report still comes out of the bag.
    @Test func theExportSectionReadsTheArchiveOnce() throws {
        let (workspace, demo) = try ReportFixture.workspace()
        let seen = Mutex<[(UInt64, UInt64)]>([])
        let export = try StudyReportService(workspace: workspace).export(demo.archive, manifest: nil) { read, total in
            seen.withLock { $0.append((read, total)) }
        }
        let size = try #require(try FileManager.default.attributesOfItem(atPath: demo.archive.path)[.size] as? NSNumber).uint64Value
        let calls = seen.withLock { $0 }
        #expect(!calls.isEmpty)
        #expect(calls.allSatisfy { $0.1 == size })
        #expect(calls.last?.0 == size)
        let key = try VerifyService.signerKey(manifest: ManifestSigner.manifestURL(forArchive: demo.archive), workspace: workspace)
        let alone = try VerifyService.verify(archive: demo.archive, manifest: nil, publicKey: key, workspace: workspace)
        #expect(export.verification.checks.map(\.name) == alone.checks.map(\.name))
        #expect(export.verification.passed == alone.passed)
        #expect(export.deidentification?.kAnonymity?.achievedK == export.manifest?.kAnonymity?.achievedK)
        #expect(export.deidentification != nil)
    }

    @Test func aMissingArchiveIsNotFoundNamingTheFile() throws {
        let (workspace, demo) = try ReportFixture.workspace()
        let missing = demo.directory.appendingPathComponent("exports/none.tar.gz")
        do {
            _ = try StudyReportService(workspace: workspace).report(asOf: demo.now, archive: missing)
            Issue.record("a missing archive must be refused")
        } catch let error as CohortError {
            #expect(error.code == .notFound && error.location?.file == missing.path)
        }
    }
}
