import CohortCompliance
import CohortCore
import CohortCrypto
import CohortDeid
import CohortPackage
import CohortStore
public import Foundation

/// Builds the ``StudyReport`` of a workspace (`cohort report`).
///
/// Reads the store only (nothing is written, no identifier is decrypted). Compliance comes from
/// ``ComplianceService`` (the same figures `cohort compliance` prints); the heatmap and the
/// weekly trend are counted from the records in a second pass with the same day rule (a day is
/// met with at least `min_per_day` records of the rule's kinds, in the participant's time zone).
/// For an export archive the verifier runs as `cohort verify -w` runs it, and the bag's
/// de-identification report is read from a second, temporary extraction.
public struct StudyReportService: Sendable {
    /// The workspace reported on.
    public let workspace: Workspace

    /// A service over `workspace`.
    public init(workspace: Workspace) { self.workspace = workspace }

    /// The report as of `asOf` (the open day then is not counted), with the export at
    /// `archive` when given (its manifest: `manifest`, default beside the archive). `progress`
    /// gets (bytes read, the archive's size) while the archive is verified; the de-identification
    /// report is read from the same pass.
    ///
    /// With `site`, every figure (enrollment, consents, withdrawals, records, compliance) covers
    /// only that site's participants and the report names the site.
    public func report(
        asOf: Date, archive: URL? = nil, manifest: URL? = nil, site: String? = nil,
        progress: (@Sendable (_ bytesRead: UInt64, _ totalBytes: UInt64) -> Void)? = nil
    ) throws -> StudyReport {
        let pinned = try workspace.currentProtocol()
        let p = pinned.studyProtocol
        let stored = try workspace.participants(site: site)
        let inScope = Set(stored.map(\.participant.id))
        let histories = try workspace.store.consentHistories().filter { inScope.contains($0.key) }
        let compliance = try ComplianceService(workspace: workspace).report(asOf: asOf, site: site)
        let records = try site == nil ? workspace.store.recordCount() : stored.reduce(0) { $0 + (try workspace.store.recordCount($1.handle)) }

        let study = StudyReport.Study(
            id: p.id, title: p.title, revision: p.revision, protocolSHA256: pinned.sha256, institution: p.institution,
            principalInvestigator: p.principalInvestigator.name, irbBoard: p.irb.board, irbApproval: p.irb.approvalNumber,
            irbExpires: p.irb.expires, durationDays: p.durationDays, currentConsentVersion: p.consent.currentVersion,
            site: try SiteName.parse(site))
        let active = stored.filter { $0.participant.status == .active }.count
        let totals = StudyReport.Totals(
            enrolled: stored.count, active: active, withdrawn: stored.count - active, records: records,
            consents: histories.values.reduce(0) { $0 + $1.count })

        var withdrawals: [WithdrawalMode: StudyReport.WithdrawalCount] = [:]
        for entry in stored {
            guard let mode = entry.participant.status.withdrawalMode else { continue }
            let by = try workspace.store.withdrawal(entry.handle)?.by
            var count = withdrawals[mode] ?? .init(mode: mode, total: 0, byParticipant: 0, byStaff: 0)
            count.total += 1
            if by == "participant" { count.byParticipant += 1 }
            if by == "staff" { count.byStaff += 1 }
            withdrawals[mode] = count
        }

        let rules = try complianceRules(compliance, studyProtocol: p, participants: stored)
        var below: [StudyReport.BelowThreshold] = []
        for (ruleIndex, rule) in compliance.rules.enumerated() {
            for entry in compliance.participants {
                guard ruleIndex < entry.rules.count, let rate = entry.rules[ruleIndex].rate, entry.rules[ruleIndex].compliant == false else { continue }
                let result = entry.rules[ruleIndex]
                below.append(
                    .init(
                        code: entry.code ?? "", ruleID: rule.ruleID, rate: rate, threshold: rule.threshold, daysMet: result.daysMet,
                        daysExpected: result.daysExpected, missedLastClosedDay: result.missedLastClosedDay, ongoing: entry.ongoing))
            }
        }
        let order = Dictionary(uniqueKeysWithValues: compliance.rules.enumerated().map { ($1.ruleID, $0) })
        below.sort { (order[$0.ruleID] ?? 0, $0.rate, $0.code) < (order[$1.ruleID] ?? 0, $1.rate, $1.code) }

        return StudyReport(
            study: study, generatedAt: Timestamp(workspace.now(), in: .gmt), asOf: Timestamp(asOf, in: .gmt), totals: totals,
            enrollment: Self.enrollmentWeeks(stored.map(\.participant.enrolledOn)), consentVersions: Self.consentVersions(histories),
            reconsentedParticipants: histories.values.filter { $0.count > 1 }.count,
            reconsents: histories.values.reduce(0) { $0 + max(0, $1.count - 1) },
            withdrawals: WithdrawalMode.allCases.compactMap { withdrawals[$0] }, rules: rules, belowThreshold: below,
            export: try archive.map { try export($0, manifest: manifest, progress: progress) })
    }

    /// The Monday that starts the week of `day`.
    static func weekStart(_ day: CivilDate) -> CivilDate { day.adding(days: 1 - day.isoWeekday) }

    /// Enrollments per week from the first enrollment week to the last, empty weeks included.
    static func enrollmentWeeks(_ days: [CivilDate]) -> [StudyReport.EnrollmentWeek] {
        guard let first = days.min(), let last = days.max() else { return [] }
        var perWeek: [CivilDate: Int] = [:]
        for day in days { perWeek[weekStart(day), default: 0] += 1 }
        var weeks: [StudyReport.EnrollmentWeek] = []
        var cumulative = 0
        var week = weekStart(first)
        while week <= last {
            let count = perWeek[week] ?? 0
            cumulative += count
            weeks.append(.init(weekStart: week, enrolled: count, cumulative: cumulative))
            week = week.adding(days: 7)
        }
        return weeks
    }

    /// Consent rows per document version (versions in the order first signed).
    static func consentVersions(_ histories: [UUID: [Consent]]) -> [StudyReport.ConsentVersion] {
        var byVersion: [String: StudyReport.ConsentVersion] = [:]
        var firstSigned: [String: Timestamp] = [:]
        for consent in histories.values.joined() {
            var entry = byVersion[consent.version] ?? .init(version: consent.version, inForce: 0, superseded: 0, withdrawn: 0)
            switch consent.status {
            case .active: entry.inForce += 1
            case .superseded: entry.superseded += 1
            case .withdrawn: entry.withdrawn += 1
            }
            byVersion[consent.version] = entry
            firstSigned[consent.version] = min(firstSigned[consent.version] ?? consent.signedAt, consent.signedAt)
        }
        return byVersion.values.sorted {
            let a = firstSigned[$0.version] ?? Timestamp(epochMilliseconds: 0), b = firstSigned[$1.version] ?? Timestamp(epochMilliseconds: 0)
            return a == b ? $0.version < $1.version : a < b
        }
    }

    /// Per rule: the cohort summary, the participant × day heatmap and the weekly trend.
    func complianceRules(_ report: ComplianceReport, studyProtocol p: StudyProtocol, participants: [StoredParticipant]) throws -> [StudyReport.Rule] {
        let protocolRules = p.compliance.rules
        // One row of day counters per participant and rule, over the participant's counted window.
        struct Window {
            var code: String
            var zone: TimeZone
            var enrollDay: Int
            var counted: Int
        }
        let byID = Dictionary(uniqueKeysWithValues: participants.map { ($0.participant.id, $0) })
        var windows: [ParticipantHandle: Window] = [:]
        // Kept apart from `windows` so a record's lookup copies no array.
        var counts: [ParticipantHandle: [[Int]]] = [:]
        for entry in report.participants {
            guard let id = entry.participantID, let participant = byID[id], let enrolled = entry.enrolledOn,
                let zone = TimeZone(identifier: entry.timeZone ?? "")
            else { continue }
            let counted = entry.lastCountedDay.map { enrolled.days(to: $0) + 1 } ?? 0
            windows[participant.handle] = Window(
                code: entry.code ?? "", zone: zone, enrollDay: enrolled.daysSinceEpoch, counted: max(0, counted))
            counts[participant.handle] = Array(repeating: Array(repeating: 0, count: max(0, counted)), count: protocolRules.count)
        }
        let kinds = protocolRules.map { $0.countedKinds(in: p) }
        try workspace.store.forEachRecordStart { pk, kind, start in
            guard let window = windows[pk] else { return }
            let offset = start.localDate(in: window.zone).daysSinceEpoch - window.enrollDay
            guard offset >= 0 && offset < window.counted else { return }
            for (index, ruleKinds) in kinds.enumerated() where ruleKinds.contains(kind) { counts[pk]?[index][offset] += 1 }
        }
        let ordered = windows.sorted { $0.value.code < $1.value.code }
        return protocolRules.enumerated().map { index, rule in
            let needed = max(1, rule.minPerDay)
            var rows: [StudyReport.HeatmapRow] = []
            var trend: [CivilDate: StudyReport.TrendWeek] = [:]
            for (pk, window) in ordered where window.counted > 0 {
                let days = (counts[pk]?[index] ?? []).map { $0 >= needed }
                for (offset, met) in days.enumerated() {
                    let week = Self.weekStart(CivilDate(daysSinceEpoch: window.enrollDay + offset))
                    var entry = trend[week] ?? .init(weekStart: week, daysMet: 0, daysCounted: 0)
                    entry.daysCounted += 1
                    if met { entry.daysMet += 1 }
                    trend[week] = entry
                }
                let met = days.filter { $0 }.count
                rows.append(
                    .init(code: window.code, firstDay: CivilDate(daysSinceEpoch: window.enrollDay), days: days, rate: Double(met) / Double(days.count)))
            }
            // The lowest rates first: those are the rows a coordinator acts on.
            rows.sort { ($0.rate ?? 2, $0.code) < ($1.rate ?? 2, $1.code) }
            let shown = Array(rows.prefix(StudyReport.heatmapRowLimit))
            let summary =
                report.rules.first { $0.ruleID == rule.id }
                ?? .init(
                    ruleID: rule.id, description: rule.description, minPerDay: rule.minPerDay, threshold: rule.threshold, kinds: [],
                    participants: 0, notApplicable: 0, compliantCount: 0, meanRate: nil, medianRate: nil, shareCompliant: nil)
            return StudyReport.Rule(
                summary: summary, heatmap: shown, heatmapOmitted: rows.count - shown.count,
                trend: trend.values.sorted { $0.weekStart < $1.weekStart })
        }
    }

    /// The export section: the verifier's checks (with the workspace's own checks), the manifest
    /// and the bag's de-identification report.
    func export(
        _ archive: URL, manifest: URL?, progress: (@Sendable (_ bytesRead: UInt64, _ totalBytes: UInt64) -> Void)? = nil
    ) throws -> StudyReport.Export {
        guard FileManager.default.fileExists(atPath: archive.path) else {
            throw CohortError(.notFound, "no such export archive", at: .init(file: archive.path), hint: "give the .tar.gz that `cohort export` wrote (in the workspace's exports/ folder by default)")
        }
        let key = try VerifyService.signerKey(manifest: manifest ?? ManifestSigner.manifestURL(forArchive: archive), workspace: workspace)
        let manifestURL = manifest ?? ManifestSigner.manifestURL(forArchive: archive)
        let parsed = ExportSection.readManifest(manifestURL)
        // The de-identification report is read from the verification's own pass over the archive
        // (it was a second pass, inflating everything again, until issue 28's sixteenth round).
        let box = DeidentificationBox()
        let reportPath = "data/reports/deidentification.json"
        let capture = ExtraVerificationCheck(name: "de-identification report", reads: .files { $0 == reportPath }) { bag in
            let url = bag.appendingPathComponent(reportPath)
            box.report = FileManager.default.contents(atPath: url.path).flatMap { try? JSONDecoder().decode(DeidentificationReport.self, from: $0) }
            return VerificationCheck(name: "de-identification report", passed: box.report != nil, detail: "")
        }
        let verification = try VerifyService.verify(
            archive: archive, manifest: manifest, publicKey: key, workspace: workspace, readers: [capture], progress: progress)
        return StudyReport.Export(archive: archive.lastPathComponent, verification: verification, manifest: parsed, deidentification: box.report)
    }
}

/// Carries the report read inside the verifier's extra check out of it (the check runs synchronously).
private final class DeidentificationBox {
    var report: DeidentificationReport?
}
