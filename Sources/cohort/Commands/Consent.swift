import ArgumentParser

extension Cohort {
    struct ConsentCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "consent",
            abstract: "Record consents (history is kept), show consent status, render consent documents.",
            subcommands: [Record.self, Status.self, Render.self])
    }
}

/// `--consent-version V` (the old `--version` still works, hidden: it sat beside the global `--version`).
struct ConsentVersionOption: ParsableArguments {
    @Option(name: .customLong("consent-version"), help: ArgumentHelp("Consent document version (listed in the protocol).", valueName: "version"))
    var consentVersion: String?

    @Option(name: .customLong("version"), help: .hidden) var deprecatedVersion: String?

    func validate() throws {
        if consentVersion == nil, deprecatedVersion == nil { throw ValidationError("Missing expected argument '--consent-version <version>'") }
        if consentVersion != nil, deprecatedVersion != nil { throw ValidationError("give --consent-version only (--version is its old name)") }
    }

    var value: String { consentVersion ?? deprecatedVersion ?? "" }
}
