import ArgumentParser
import CohortKit
import Foundation

/// Options every workspace command shares: `-w/--workspace`, `--actor`, `--quiet`.
struct WorkspaceOptions: ParsableArguments {
    @Option(name: [.customShort("w"), .long], help: "The workspace directory (default: $COHORT_WORKSPACE or the current directory).")
    var workspace: String?

    @Option(help: "Who is acting, for the audit trail (default: the OS user).")
    var actor: String?

    @OptionGroup var output: OutputOptions

    var directory: URL {
        URL(fileURLWithPath: workspace ?? ProcessInfo.processInfo.environment["COHORT_WORKSPACE"] ?? FileManager.default.currentDirectoryPath)
    }

    var actorName: String { Workspace.actorName(explicit: actor) }

    /// Opens the workspace; read-only commands pass `readOnly` (they then work on a copy nobody may write).
    func open(readOnly: Bool = false, checkingAuditHead: Bool = true) throws -> Workspace {
        output.apply()
        return try Workspace.openForCommand(
            at: directory, actor: actorName, readOnly: readOnly, checkingAuditHead: checkingAuditHead,
            environment: ProcessInfo.processInfo.environment,
            onUpgrading: { Console.note("upgrading the study database to this version's schema (once; a large study takes a minute)…") }
        ) {
            Console.note("waiting for another cohort command to finish (study.db is locked)…")
        }
    }
}

/// `--quiet`: no progress bar and no notes on stderr (errors and data output stay).
struct OutputOptions: ParsableArguments {
    @Flag(name: [.customShort("q"), .long], help: "No progress and no notes on stderr (errors and data output stay).")
    var quiet = false

    /// Makes the flag take effect for this run.
    func apply() { if quiet { Console.quiet = true } }

    mutating func validate() throws { apply() }
}
