import ArgumentParser
import CohortKit

extension Cohort.Keys {
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print key fingerprints (never the keys).",
            discussion: """
                Examples:
                  cohort keys show -w my-study
                  cohort keys show --keystore my-keys --format json
                """)

        @OptionGroup var keystore: KeystoreOptions

        @Option(help: "How to report the result.")
        var format: ReportFormat = .table

        @OptionGroup var options: WorkspaceOptions

        func validate() throws { try format.refusingCSV("keys show") }

        func run() throws {
            options.output.apply()
            let fingerprints = try KeysService.show(at: keystore.directory(options))
            if format == .json { try printJSON(fingerprints) } else { printFingerprints(fingerprints) }
        }
    }
}
