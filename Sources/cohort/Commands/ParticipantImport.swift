import ArgumentParser
import CohortKit
import Foundation

extension Cohort.ParticipantCommand {
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Enroll every participant of a roster CSV (all or nothing).",
            discussion: """
                Header: code,name,email,phone,birth_date,sex,address,zip,mrn,time_zone,enrolled_on,devices (code, name, time_zone and \
                enrolled_on required; devices separated by ';'). Any bad line stores nothing and names file:line: field.

                Each participant's withdrawal token is shown once: --tokens FILE writes them to a new file with mode 0600. Printed to \
                stdout they go to the terminal or a pipe; a redirect to a file that group or others may read is refused (exit 6) \
                before anything is enrolled.

                Example:
                  cohort participant import roster.csv --tokens tokens.csv -w my-study
                """)

        @Argument(help: "The roster CSV.") var file: String
        @Option(help: "How to print the data.") var format: OutputFormat = .table
        @OptionGroup var tokens: TokenOutput
        @OptionGroup var options: WorkspaceOptions

        func run() throws {
            try tokens.checkDestination()
            let workspace = try options.open()
            let enrolled = try Roster(workspace: workspace).importCSV(URL(fileURLWithPath: file))
            try tokens.write(enrolled, format: format)
            Console.note("Enrolled \(enrolled.count) participant(s). Hand each their withdrawal token: it is not shown again.")
        }
    }
}
