import ArgumentParser
import CohortKit
import Foundation
import CohortCore
import CohortStore

extension Cohort.ProtocolCommand {
    struct Load: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Pin a protocol revision (and the templates it names) in the workspace.",
            discussion: """
                The canonical JSON and its SHA-256 are stored; exports name the revision and hash. An amendment needs a higher revision number.

                Example:
                  cohort protocol load protocols/axspa-wearables.yaml -w my-study
                """)

        @Argument(help: "A protocol file.")
        var file: String

        @OptionGroup var options: WorkspaceOptions

        func run() throws {
            let workspace = try options.open()
            let pinned = try workspace.loadProtocol(URL(fileURLWithPath: file))
            Console.print("Loaded \(pinned.studyProtocol.id) revision \(pinned.studyProtocol.revision) (sha256 \(pinned.sha256))")
        }
    }
}
