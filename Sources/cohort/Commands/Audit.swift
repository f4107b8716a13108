import ArgumentParser

extension Cohort {
    struct Audit: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify and list the hash-linked audit trail.",
            subcommands: [Verify.self, Show.self])
    }
}
