import ArgumentParser
import CohortKit
import CohortCore
import Foundation

extension Cohort.ProtocolCommand {
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

        @Option(help: "How to report the result: table (one problem per line) or json.")
        var format: ReportFormat = .table

        @OptionGroup var output: OutputOptions

        func validate() throws { try format.refusingCSV("protocol validate") }

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
            if format == .json { try printJSON(all) }
            if failed { throw ExitCode(1) }
        }
    }
}
