import ArgumentParser
import CohortKit
import Foundation
import CohortCompliance

extension Cohort {
    struct Compliance: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Compliance per participant, per rule and per study week, with a cohort summary.",
            discussion: """
                Unit: the participant-day in the participant's time zone. Days counted: from enrollment to the earliest of study end, \
                the day before withdrawal, or the last fully closed day (today never counts). Zero days → N/A, never 100%. \
                Compliant: rate ≥ the rule's threshold. Everything shown — rates, status, who is below — is as of --as-of.

                Examples:
                  cohort compliance -w my-study
                  cohort compliance --as-of 2026-11-01 --below 0.8 --format csv -w my-study
                  cohort compliance --site site-a -w my-study
                """)

        @Option(help: ArgumentHelp("Report as of this date (YYYY-MM-DD) or ISO 8601 instant; default now.", valueName: "date")) var asOf: DateOrInstant?
        @Option(help: ArgumentHelp("Only participants below this rate (0.8 or 80%).", valueName: "rate")) var below: Rate?
        @Option(help: "Only the participants of this site (default: every site).") var site: String?
        @Option(help: "How to print the data.") var format: OutputFormat = .table
        @OptionGroup var options: WorkspaceOptions

        func run() throws {
            let workspace = try options.open(readOnly: true)
            var report = try ComplianceService(workspace: workspace).report(asOf: asOf?.date ?? workspace.now(), site: site)
            if let below { report = report.filtered(below: below.value) }
            switch format {
            case .table: Console.print(report.tableText())
            case .csv:
                let rows = report.csvRows()
                Console.print(TableRenderer.csv(rows[0], Array(rows.dropFirst())))
            case .json: FileHandle.standardOutput.write(try report.jsonData() + Data("\n".utf8))
            }
        }
    }
}
