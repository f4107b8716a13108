import ArgumentParser
import CohortKit
import CohortCore
import Foundation

extension Cohort.ProtocolCommand {
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the normalized protocol (YAML, or JSON with --format json) and its SHA-256.",
            discussion: """
                Examples:
                  cohort protocol show protocols/minimal.yaml
                  cohort protocol show protocols/minimal.yaml --format json
                """)

        @Argument(help: "A protocol file.")
        var file: String

        /// A protocol is a document, not rows: YAML or JSON.
        enum Format: String, ExpressibleByArgument { case yaml, json }

        @Option(help: "yaml or json.")
        var format: Format = .yaml

        @OptionGroup var output: OutputOptions

        func run() throws {
            let loaded = try ProtocolLoader.load(contentsOf: URL(fileURLWithPath: file))
            for w in loaded.warnings { Console.note(w.description) }
            switch format {
            case .json: Console.print(try ProtocolRendering.json(loaded.studyProtocol))
            case .yaml: Console.print(try ProtocolRendering.yaml(loaded.studyProtocol))
            }
            Console.note("sha256 of canonical JSON: \(ProtocolDigest.sha256(try loaded.canonicalJSON()))")
        }
    }
}
