import ArgumentParser

extension Cohort {
    struct Keys: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create the keystore or show key fingerprints.",
            subcommands: [InitKeys.self, Show.self])
    }
}
