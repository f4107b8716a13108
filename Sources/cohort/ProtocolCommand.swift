import ArgumentParser
import CohortCore
import CohortKit
import Foundation
import Yams
import CohortStore

extension Cohort {
    struct ProtocolCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "protocol",
            abstract: "Validate, show and load study protocols (cohort/protocol@1).",
            subcommands: [Validate.self, Show.self, Load.self, Examples.self])

        struct Validate: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Report every problem in protocol files, with file, line and key path.",
                discussion: """
                    Exits 0 when every file is valid (warnings are printed), 1 when any has errors.

                    Examples:
                      cohort protocol validate protocols/*.yaml
                      cohort protocol validate study.json --format json
                    """)

            @Argument(help: "Protocol files (YAML or JSON).")
            var files: [String]

            @Option(help: "table (one problem per line) or json.")
            var format: OutputFormat = .table

            func run() throws {
                var all: [ProtocolProblem] = []
                var failed = false
                for file in files {
                    do {
                        let loaded = try ProtocolLoader.load(contentsOf: URL(fileURLWithPath: file))
                        all += loaded.warnings
                        if format != .json {
                            for w in loaded.warnings { Console.note(w.description) }
                            Console.print("\(file): valid (\(loaded.studyProtocol.id) revision \(loaded.studyProtocol.revision), \(loaded.warnings.count) warning(s))")
                        }
                    } catch let error as ProtocolValidationError {
                        failed = true
                        all += error.problems
                        if format != .json {
                            for p in error.problems { Console.note(p.description) }
                            Console.print("\(file): \(error.problems.filter { $0.severity == .error }.count) error(s)")
                        }
                    } catch let error as CohortError {
                        failed = true
                        all.append(ProtocolProblem(.error, file: file, line: nil, keyPath: "", message: error.message, hint: error.hint))
                        if format != .json { Console.note("\(file): error: \(error.message)") }
                    }
                }
                if format == .json {
                    Console.print(String(decoding: try JSONEncoder.pretty.encode(all), as: UTF8.self))
                }
                if failed { throw ExitCode(1) }
            }
        }

        struct Show: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Print the normalized protocol (YAML, or JSON with --format json) and its SHA-256.",
                discussion: "Examples:\n  cohort protocol show protocols/minimal.yaml\n  cohort protocol show protocols/minimal.yaml --format json")

            @Argument(help: "A protocol file.")
            var file: String

            enum Format: String, ExpressibleByArgument { case yaml, json }

            @Option(help: "yaml or json.")
            var format: Format = .yaml

            func run() throws {
                let loaded = try ProtocolLoader.load(contentsOf: URL(fileURLWithPath: file))
                for w in loaded.warnings { Console.note(w.description) }
                switch format {
                case .json:
                    Console.print(String(decoding: try CanonicalJSON.pretty(loaded.studyProtocol), as: UTF8.self))
                case .yaml:
                    let encoder = YAMLEncoder()
                    encoder.options.sortKeys = true
                    Console.print(try encoder.encode(loaded.studyProtocol))
                }
                Console.note("sha256 of canonical JSON: \(ProtocolDigest.sha256(try loaded.canonicalJSON()))")
            }
        }

        struct Load: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Pin a protocol revision (and the templates it names) in the workspace.",
                discussion: """
                    The canonical JSON and its SHA-256 are stored; exports name the revision and hash. An
                    amendment needs a higher revision number.

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
}
