import CohortCompliance
import CohortCore
import CohortDeid
import CohortPackage
import Foundation

extension StudyReport {
    /// The report as one self-contained HTML document (see ``ReportPage``); every value from the
    /// store or the archive is escaped.
    public func html() -> String {
        ReportPage.document(title: "\(study.title) — study report", body: Markup([header, summarySection, enrollmentSection, consentSection, withdrawalSection, complianceSection, belowSection, exportSection]))
    }

    private var header: Markup {
        """
        <header>
        <h1>\(study.title)</h1>
        <p class="meta">Study report · study <code>\(study.id)</code> · protocol revision \(study.revision) (<code>\(String(study.protocolSHA256.prefix(16)))…</code>) · as of \(asOf.iso8601) · generated \(generatedAt.iso8601) by cohort \(CohortVersion.string)</p>
        <p class="note">Participants are named by study code only; this report holds no name, contact detail, birth date, address, MRN or device name. Study codes are still identifiers: keep the report within the study team.</p>
        </header>
        """
    }

    private var summarySection: Markup {
        let facts: [(String, String)] = [
            ("Institution", study.institution), ("Principal investigator", study.principalInvestigator),
            ("IRB", "\(study.irbBoard), approval \(study.irbApproval), expires \(study.irbExpires)"),
            ("Duration", "\(study.durationDays) days per participant"), ("Current consent version", study.currentConsentVersion),
            ("Scope", study.site.map { "site \($0) only (every figure covers that site's participants)" } ?? "the whole study (every site)"),
        ]
        let cards: [(String, Int, String)] = [
            ("enrolled", totals.enrolled, "Participants enrolled"), ("active", totals.active, "Active"),
            ("withdrawn", totals.withdrawn, "Withdrawn"), ("records", totals.records, "Records stored"),
            ("consents", totals.consents, "Consent rows"),
        ]
        return """
            <section id="summary">
            <h2>Study summary</h2>
            <dl class="facts">\(facts.map { "<dt>\($0.0)</dt><dd>\($0.1)</dd>" as Markup })</dl>
            <ul class="cards">\(cards.map { "<li id=\"total-\($0.0)\"><span class=\"figure\">\($0.1)</span>\($0.2)</li>" as Markup })</ul>
            </section>
            """
    }

    private var enrollmentSection: Markup {
        let chart = SVGChart.bars(
            id: "enrollment-chart", title: "Participants enrolled per week", labels: enrollment.map { String($0.weekStart.description.dropFirst(5)) },
            values: enrollment.map(\.enrolled))
        let table = ReportPage.table(
            caption: "Enrollment per week (weeks start on Monday)", header: ["Week of", "Enrolled", "Cumulative"],
            rows: enrollment.map { ["\($0.weekStart.description)", "\($0.enrolled)", "\($0.cumulative)"] }, numeric: [1, 2])
        return """
            <section id="enrollment">
            <h2>Enrollment over time</h2>
            \(enrollment.isEmpty ? "<p>No participant is enrolled yet.</p>" : ReportPage.figure(chart: chart, table: table))
            </section>
            """
    }

    private var consentSection: Markup {
        let table = ReportPage.table(
            caption: "Consent rows per document version", header: ["Version", "In force", "Superseded", "Withdrawn"],
            rows: consentVersions.map { ["\($0.version)", "\($0.inForce)", "\($0.superseded)", "\($0.withdrawn)"] }, numeric: [1, 2, 3])
        return """
            <section id="consent">
            <h2>Consent versions and re-consents</h2>
            \(table)
            <p id="reconsents">Re-consents: <strong>\(reconsents)</strong> (by \(reconsentedParticipants) participant(s)). A re-consent adds a row; the earlier row is kept as superseded.</p>
            </section>
            """
    }

    private var withdrawalSection: Markup {
        let table = ReportPage.table(
            caption: "Withdrawals by mode", header: ["Mode", "Participants", "By the participant", "By staff"],
            rows: withdrawals.map { ["\($0.mode.rawValue)", "\($0.total)", "\($0.byParticipant)", "\($0.byStaff)"] }, numeric: [1, 2, 3],
            empty: "no withdrawal")
        let chart = SVGChart.bars(
            id: "withdrawal-chart", title: "Withdrawals by mode", labels: WithdrawalMode.allCases.map(\.rawValue),
            values: WithdrawalMode.allCases.map { mode in withdrawals.first { $0.mode == mode }?.total ?? 0 })
        return """
            <section id="withdrawals">
            <h2>Withdrawals by mode</h2>
            <p class="note">stop: no new data, existing data stays in exports · exclude: also left out of later exports · erase: identifiers and records deleted.</p>
            \(withdrawals.isEmpty ? table : ReportPage.figure(chart: chart, table: table))
            </section>
            """
    }

    private var complianceSection: Markup {
        let sections = rules.enumerated().map { index, rule in ruleSection(rule, index: index) }
        return """
            <section id="compliance">
            <h2>Compliance per rule</h2>
            <p class="note">Unit: the participant-day in the participant's time zone, from enrollment to the earliest of study end, the day before withdrawal, or the last closed day before \(asOf.iso8601). A rate with no counted day is N/A.</p>
            \(sections)
            </section>
            """
    }

    private func ruleSection(_ rule: Rule, index: Int) -> Markup {
        let s = rule.summary
        let facts: [(String, String)] = [
            ("Counts", "at least \(s.minPerDay) record(s) a day of \(s.kinds.map(\.rawValue).joined(separator: ", "))"),
            ("Threshold", SVGChart.percent(s.threshold)),
            ("Participants", "\(s.participants) (\(s.notApplicable) N/A)"),
            ("Compliant", "\(s.compliantCount)" + (s.shareCompliant.map { " (\(SVGChart.percent($0)) of those with a rate)" } ?? "")),
            ("Below threshold", "\(s.participants - s.notApplicable - s.compliantCount)"),
            ("Mean / median rate", "\(s.meanRate.map(SVGChart.percent) ?? "N/A") / \(s.medianRate.map(SVGChart.percent) ?? "N/A")"),
        ]
        return """
            <section class="rule" id="rule-\(s.ruleID)">
            <h3>Rule \(s.ruleID): \(s.description)</h3>
            <dl class="facts">\(facts.map { "<dt>\($0.0)</dt><dd>\($0.1)</dd>" as Markup })</dl>
            \(heatmapSection(rule, index: index))
            <h4>Weekly trend</h4>
            \(trendSection(rule, index: index))
            </section>
            """
    }

    /// The participant × day heatmap of `rule` (the last ``StudyReport/heatmapDayLimit`` days),
    /// with the same days as tables.
    private func heatmapSection(_ rule: Rule, index: Int) -> Markup {
        let s = rule.summary
        let firstDay = rule.heatmap.map(\.firstDay).min()
        let lastDay = rule.heatmap.map { $0.firstDay.adding(days: $0.days.count - 1) }.max()
        guard let firstDay, let lastDay else { return "<p>No participant has a counted day yet.</p>" }
        let from = max(firstDay, lastDay.adding(days: 1 - StudyReport.heatmapDayLimit))
        let chart = SVGChart.heatmap(
            id: "heatmap-\(index)", title: "\(s.ruleID): days met per participant (rows) and day (columns)", rows: rule.heatmap, firstDay: from,
            lastDay: lastDay)
        let dayCount = from.days(to: lastDay) + 1
        let dayHeader = (0..<dayCount).map { from.adding(days: $0).description }
        let dayRows: [[Markup]] = rule.heatmap.map { row in
            ["\(row.code)"]
                + (0..<dayCount).map { offset -> Markup in
                    let i = row.firstDay.days(to: from.adding(days: offset))
                    return i >= 0 && i < row.days.count ? (row.days[i] ? "✔" : "✘") : ""
                }
        }
        let perParticipant = ReportPage.table(
            caption: "\(s.ruleID): days met per participant (lowest rate first)", header: ["Study code", "Days met", "Days counted", "Rate"],
            rows: rule.heatmap.map { row in
                let met = row.days.filter { $0 }.count
                return ["\(row.code)", "\(met)", "\(row.days.count)", "\(row.rate.map(SVGChart.percent) ?? "N/A")"]
            }, numeric: [1, 2, 3])
        return """
            <h4>Participant × day</h4>
            <p class="note"><span class="legend met"></span>met <span class="legend missed"></span>missed <span class="legend none"></span>not counted (before enrollment, after the window)\(rule.heatmapOmitted > 0 ? " · \(rule.heatmapOmitted) more participant(s) with higher rates are not drawn" as Markup : "")</p>
            <figure><div class="scroll">\(chart)</div>
            <details><summary>Days met per participant (\(rule.heatmap.count), lowest rate first)</summary>\(perParticipant)</details>
            <details><summary>Every day as a table (✔ met, ✘ missed, empty: not counted)</summary><div class="scroll">\(ReportPage.table(caption: "\(s.ruleID): every counted day", header: ["Study code"] + dayHeader, rows: dayRows))</div></details>
            </figure>
            """
    }

    /// The weekly trend of `rule` as a chart and a table.
    private func trendSection(_ rule: Rule, index: Int) -> Markup {
        guard !rule.trend.isEmpty else { return "<p>No counted week yet.</p>" }
        let s = rule.summary
        let trendChart = SVGChart.trend(
            id: "trend-\(index)", title: "\(s.ruleID): share of participant-days met per calendar week, threshold \(SVGChart.percent(s.threshold))",
            labels: rule.trend.map { String($0.weekStart.description.dropFirst(5)) }, rates: rule.trend.map(\.rate), threshold: s.threshold)
        let trendTable = ReportPage.table(
            caption: "\(s.ruleID): weekly trend (weeks start on Monday; threshold \(SVGChart.percent(s.threshold)))",
            header: ["Week of", "Days met", "Days counted", "Rate", "At or above threshold"],
            rows: rule.trend.map { week in
                ["\(week.weekStart.description)", "\(week.daysMet)", "\(week.daysCounted)", "\(week.rate.map(SVGChart.percent) ?? "N/A")",
                 "\(week.rate.map { $0 >= s.threshold ? "yes" : "no" } ?? "N/A")"]
            }, numeric: [1, 2, 3])
        return ReportPage.figure(chart: trendChart, table: "<details><summary>The weekly trend as a table (\(rule.trend.count) weeks)</summary>\(trendTable)</details>")
    }

    private var belowSection: Markup {
        let table = ReportPage.table(
            caption: "Participants below a rule's threshold as of \(asOf.iso8601)",
            header: ["Study code", "Rule", "Rate", "Threshold", "Days met", "Days counted", "Missed last closed day", "Still in the study"],
            rows: belowThreshold.map { b in
                ["\(b.code)", "\(b.ruleID)", "\(SVGChart.percent(b.rate))", "\(SVGChart.percent(b.threshold))", "\(b.daysMet)", "\(b.daysExpected)",
                 "\(b.missedLastClosedDay ? "yes" : "no")", "\(b.ongoing ? "yes" : "no")"]
            }, numeric: [2, 3, 4, 5], empty: "nobody is below a threshold")
        return """
            <section id="below-threshold">
            <h2>Participants below threshold</h2>
            <p id="below-count">\(Set(belowThreshold.map(\.code)).count) participant(s) below at least one rule's threshold (\(belowThreshold.count) participant-rule pair(s)). <code>cohort reminders</code> drafts messages for those still in the study.</p>
            \(table)
            </section>
            """
    }

    private var exportSection: Markup {
        guard let export else { return "" }
        return ExportSection(export: export).markup
    }
}
