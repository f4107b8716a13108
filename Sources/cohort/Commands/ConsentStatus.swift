import ArgumentParser
import CohortKit

extension Cohort.ConsentCommand {
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every participant's consent version, date, sharing scope and whether re-consent is due.",
            discussion: """
                Examples:
                  cohort consent status -w my-study
                  cohort consent status --format csv -w my-study
                """)

        @Option(help: "How to print the data.") var format: OutputFormat = .table
        @OptionGroup var options: WorkspaceOptions

        func run() throws {
            let service = ConsentService(workspace: try options.open(readOnly: true))
            switch format {
            case .table: Console.print(try service.statusTable())
            case .csv:
                let rows = try service.statusCSV()
                Console.print(TableRenderer.csv(rows[0], Array(rows.dropFirst())))
            case .json: try printJSON(try service.status())
            }
        }
    }
}
