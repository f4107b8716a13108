import ArgumentParser

extension Cohort {
    struct Deid: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "De-identification tools: residual-PII scan, before/after preview, re-identification risk.",
            subcommands: [Scan.self, Preview.self, Risk.self])
    }
}
