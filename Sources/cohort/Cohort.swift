import ArgumentParser
import CohortCore
import CohortKit
import CohortStore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The `cohort` command: the data side of a health research study.
@main
struct Cohort: ParsableCommand {
    static let version = CohortVersion.string

    static let configuration = CommandConfiguration(
        commandName: "cohort",
        abstract: "Run the data side of a health research study: protocols, roster, consent, data, compliance, de-identified signed exports.",
        discussion: """
            Exit codes: 0 success · 1 a check failed (validation, verification, audit, scan) · 2 usage error ·
            3 invalid input · 4 not found · 5 conflict · 6 security (keys, permissions, token) · 7 integrity ·
            8 refused by policy (consent, withdrawal, residual PII) · 10 system or I/O error.

            Examples:
              cohort demo                              # a demo study end to end
              cohort init --dir my-study --protocol protocols/axspa-wearables.yaml
              cohort participant import roster.csv -w my-study
              cohort data import symptoms.csv heart_rate.ndjson -w my-study
              cohort audit verify -w my-study       # or: export COHORT_WORKSPACE=my-study
            """,
        version: version,
        subcommands: [
            Init.self, Keys.self, ProtocolCommand.self, ParticipantCommand.self, ConsentCommand.self, DataCommand.self, Withdraw.self, Receipt.self,
            Compliance.self, Reminders.self, ReportCommand.self, Deid.self, Export.self, Verify.self, Audit.self, Demo.self,
        ]
    )

    static func main() {
        umask(0o077)
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let error as CohortError {
            Console.error(error.description)
            Foundation.exit(ExitCodes.code(for: error))
        } catch let error as ProtocolValidationError {
            for problem in error.problems { Console.error(problem.description) }
            Foundation.exit(3)
        } catch {
            // swift-argument-parser exits 64 (EX_USAGE) on a usage error; cohort documents 2, as
            // `--help` and the README say. Help and --version still exit 0 through the parser.
            if exitCode(for: error) == .validationFailure {
                Console.error(fullMessage(for: error))
                Foundation.exit(ExitCodes.usage)
            }
            exit(withError: error)
        }
    }
}

/// Maps error codes to the documented exit codes.
enum ExitCodes {
    /// Usage error: an unknown option, a missing argument, a bad flag value.
    static let usage: Int32 = 2

    static func code(for error: CohortError) -> Int32 {
        switch error.code {
        case .invalidInput: 3
        case .notFound: 4
        case .conflict: 5
        case .security: 6
        case .integrity: 7
        case .policy: 8
        case .system: 10
        }
    }
}

/// Options every workspace command shares.
struct WorkspaceOptions: ParsableArguments {
    @Option(name: [.customShort("w"), .long], help: "The workspace directory (default: $COHORT_WORKSPACE or the current directory).")
    var workspace: String?

    @Option(help: "Who is acting, for the audit trail (default: the OS user).")
    var actor: String?

    var directory: URL {
        URL(fileURLWithPath: workspace ?? ProcessInfo.processInfo.environment["COHORT_WORKSPACE"] ?? FileManager.default.currentDirectoryPath)
    }

    var actorName: String { Workspace.actorName(explicit: actor) }

    /// Opens the workspace; read-only commands pass `readOnly` (they then work on a copy nobody may write).
    func open(readOnly: Bool = false, checkingAuditHead: Bool = true) throws -> Workspace {
        let options = try StudyStore.OpenOptions.command(readOnly: readOnly, environment: ProcessInfo.processInfo.environment) {
            Console.note("waiting for another cohort command to finish (study.db is locked)…")
        }
        return try Workspace.open(at: directory, actor: actorName, options: options, checkingAuditHead: checkingAuditHead)
    }
}

/// Output formats for commands whose output is data.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case table
    case json
    case csv
}
