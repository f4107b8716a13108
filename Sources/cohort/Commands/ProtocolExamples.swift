import ArgumentParser
import CohortKit
import Foundation

extension Cohort.ProtocolCommand {
    /// `cohort protocol examples`: writes the example protocols and their templates, which are
    /// compiled into the binary, so an installed `cohort` needs no source tree.
    struct Examples: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "examples",
            abstract: "Write the example protocols and their consent templates into a folder.",
            discussion: """
                Writes protocols/*.yaml and templates/** (compiled into cohort) under --out, ready for `cohort protocol validate` and \
                `cohort init --protocol`. Existing files of the same name are replaced only with --force.

                Examples:
                  cohort protocol examples --out .
                  cohort protocol examples --out my-protocols --force
                """)

        @Option(help: "Folder to write protocols/ and templates/ into.")
        var out: String = "."

        @Flag(help: "Replace files that already exist.")
        var force = false

        @OptionGroup var output: OutputOptions

        func run() throws {
            let directory = URL(fileURLWithPath: out, isDirectory: true)
            let existing = ExampleFiles.paths.filter { FileManager.default.fileExists(atPath: directory.appendingPathComponent($0).path) }
            if !existing.isEmpty && !force {
                throw ValidationError("\(existing.count) file(s) already exist under \(out) (e.g. \(existing[0])); pass --force to replace them")
            }
            try ExampleFiles.write(into: directory)
            for path in ExampleFiles.paths { Console.print(directory.appendingPathComponent(path).path) }
        }
    }
}
