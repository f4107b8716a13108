import ArgumentParser
import CohortKit
import CohortDeid

extension Cohort.Deid {
    struct Preview: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a coordinator before/after for a sample of one participant's records.",
            discussion: """
                Example:
                  cohort deid preview --participant P-0001 --recipient lab-b -w my-study
                """)

        @Option(help: "Study code.") var participant: String
        @Option(help: "Recipient (pseudonyms and shifts depend on it).") var recipient: String = "preview"
        @Option(help: "How many records to show.") var sample: Int = 5
        @Option(help: "How to print the data.") var format: OutputFormat = .table
        @OptionGroup var options: WorkspaceOptions

        func validate() throws {
            guard sample > 0 else { throw ValidationError("--sample must be at least 1") }
        }

        func run() throws {
            let workspace = try options.open()
            let rows = try DeidPreviewService.preview(workspace: workspace, code: participant, recipient: recipient, sample: sample)
            try TableRenderer.print(format, header: ["field", "before", "after"], rows: rows.map { [$0.field, $0.before ?? "", $0.after ?? "(dropped)"] }) {
                try printJSON(rows)
            }
        }
    }
}
