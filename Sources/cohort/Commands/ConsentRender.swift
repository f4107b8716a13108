import ArgumentParser
import CohortKit
import Foundation

extension Cohort.ConsentCommand {
    struct Render: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Render a consent document with the study's details (the text consent rows hash).",
            discussion: """
                Examples:
                  cohort consent render --consent-version 1.0 -w my-study
                  cohort consent render --consent-version 1.0 -w my-study | sha256sum
                """)

        @OptionGroup var version: ConsentVersionOption
        @OptionGroup var options: WorkspaceOptions

        func run() throws {
            let text = try ConsentService(workspace: try options.open()).render(version: version.value)
            FileHandle.standardOutput.write(Data(text.utf8))
        }
    }
}
