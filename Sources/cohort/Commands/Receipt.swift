import ArgumentParser

extension Cohort {
    struct Receipt: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify signed withdrawal receipts.",
            subcommands: [Verify.self])
    }
}
