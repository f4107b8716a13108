import ArgumentParser
import CohortKit
import Foundation
import CohortDeid

extension Cohort.Deid {
    struct Scan: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Scan files or folders for any roster participant's identifiers (reports file:line:field:kind, never the value).",
            discussion: """
                Scans the participant values (CSV data cells, JSON string values); in folders, cohort's own fixed-text files \
                (codebook, datapackage.json, README.txt, reports…) are skipped. Exit 1 when anything is found. --format json and \
                --format csv add each value's SHA-256: the csv output is an exceptions file for `cohort export --allow` once a \
                reviewer fills in reviewer and reason.

                Examples:
                  cohort deid scan exports/bag/data -w my-study
                  cohort deid scan notes.csv --format json -w my-study
                  cohort deid scan exports/bag --format csv -w my-study > exceptions.csv
                """)

        @Argument(help: "Files or folders.") var paths: [String]
        @Option(help: "How to print the findings (csv: the exceptions file).") var format: OutputFormat = .table
        @OptionGroup var options: WorkspaceOptions

        func run() throws {
            let workspace = try options.open()
            let result = try ResidualScanService.scan(paths: paths.map { URL(fileURLWithPath: $0) }, workspace: workspace)
            switch format {
            case .json: try printJSON(result)
            case .csv: Console.print(TableRenderer.csv(ResidualScanService.exceptionHeader, ResidualScanService.exceptionRows(result.findings)))
            case .table:
                for f in result.findings { Console.print(f.description) }
                Console.print(
                    result.findings.isEmpty
                        ? "✔ no identifiers found in \(result.filesScanned) file(s) (\(result.ruleCountsSummary))"
                        : "✘ \(result.findings.count) finding(s) in \(result.filesScanned) file(s) (\(result.ruleCountsSummary))")
            }
            if !result.findings.isEmpty { throw ExitCode(1) }
        }
    }
}
