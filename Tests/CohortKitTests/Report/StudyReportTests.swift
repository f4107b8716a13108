import CohortCore
import Foundation
import Testing

@testable import CohortKit
import CohortPackage

/// The rendered study page: every section, no script or external resource, and hostile values
/// shown as text.
struct StudyReportTests {
    static let hostile = "<script>alert('x')</script><img src=x onerror=alert(1)>\"'&"

    @Test func hostileValuesAreShownAsTextNeverAsMarkup() throws {
        let (workspace, demo) = try ReportFixture.workspace()
        var report = try StudyReportService(workspace: workspace).report(asOf: demo.now, archive: demo.archive)
        report.study.title = Self.hostile
        report.study.institution = Self.hostile
        report.rules[0].heatmap[0].code = Self.hostile
        report.belowThreshold[0].code = Self.hostile
        report.consentVersions[0].version = Self.hostile
        report.export?.verification.checks[0].detail = Self.hostile
        let html = report.html()
        #expect(!html.contains("<script"))
        #expect(!html.contains("<img"))
        #expect(!html.contains("onerror=alert(1)>"))
        #expect(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;"))
    }

    @Test func isOneSelfContainedPageWithEverySection() throws {
        let (workspace, demo) = try ReportFixture.workspace()
        let report = try StudyReportService(workspace: workspace).report(asOf: demo.now, archive: demo.archive)
        let html = report.html()
        for id in ["summary", "enrollment", "consent", "withdrawals", "compliance", "below-threshold", "export"] {
            #expect(html.contains("<section id=\"\(id)\">"), "section \(id)")
        }
        // No script, no network: nothing refers to another resource, and the CSP forbids it.
        #expect(!html.contains("<script") && !html.contains("src=") && !html.contains("href=") && !html.contains("url("))
        #expect(html.contains("default-src 'none'"))
        // A table behind every chart.
        let charts = html.components(separatedBy: "<svg ").count - 1
        #expect(charts >= 2 + 2 * report.rules.count)
        for figure in html.components(separatedBy: "<figure>").dropFirst() {
            #expect(figure.contains("<table>"), "a chart without its table")
        }
        // No identifier beyond study codes: the report decrypts none, so no name can appear.
        let names = try ReportFixture.sql(demo, "SELECT count(*) FROM participants WHERE name_enc IS NOT NULL")
        #expect(Int(names[0][0]) ?? 0 > 0)
        #expect(!html.contains("@example"))
    }
}
