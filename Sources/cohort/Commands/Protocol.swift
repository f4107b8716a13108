import ArgumentParser

extension Cohort {
    struct ProtocolCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "protocol",
            abstract: "Validate, show and load study protocols (cohort/protocol@1).",
            subcommands: [Validate.self, Show.self, Load.self, Examples.self])
    }
}
