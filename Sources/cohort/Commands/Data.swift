import ArgumentParser

extension Cohort {
    struct DataCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "data",
            abstract: "Import study records.",
            subcommands: [Import.self, PseudonymMap.self])
    }
}
