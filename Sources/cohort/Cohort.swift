import ArgumentParser
import CohortKit
import CohortCore
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
            Exit codes: 0 success; 1 a check failed (validation, verification, audit, scan); 2 usage error; \
            3 invalid input; 4 not found; 5 conflict; 6 security (keys, permissions, token); 7 integrity; \
            8 refused by policy (consent, withdrawal, residual PII); 10 system or I/O error.

            Workspace commands take -w/--workspace DIR (or COHORT_WORKSPACE); data output takes --format table|json|csv \
            (a command that cannot write CSV refuses it with exit 2); --quiet silences progress and notes.

            Examples:
              cohort demo                                   # a demo study end to end
              cohort init -w my-study --protocol protocols/axspa-wearables.yaml
              cohort participant import roster.csv --tokens tokens.csv -w my-study
              cohort data import symptoms.csv heart_rate.ndjson -w my-study
              cohort audit verify -w my-study     # or: export COHORT_WORKSPACE=my-study
            """,
        version: version,
        subcommands: [
            Init.self, Keys.self, ProtocolCommand.self, ParticipantCommand.self, ConsentCommand.self, DataCommand.self, Withdraw.self, Receipt.self,
            Compliance.self, Reminders.self, ReportCommand.self, Deid.self, Export.self, Deliver.self, Verify.self, Audit.self, SiteCommand.self, Demo.self,
        ]
    )

    static func main() {
        umask(0o077)
        // Large transient blocks go back to the system when freed (exports and verify stay near
        // what they hold): an executable's choice, so the library leaves the allocator alone.
        ProcessMemory.returnLargeBlocksWhenFreed()
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
                // A mistyped subcommand or option is named first, with the closest real one.
                if let better = UsageSuggestion.message(for: Array(CommandLine.arguments.dropFirst())) {
                    Console.error(better)
                } else {
                    var message = fullMessage(for: error)
                    // The parser starts its message with "Error: "; Console.error already says "error: ".
                    if message.hasPrefix("Error: ") { message.removeFirst("Error: ".count) }
                    Console.error(message)
                }
                Foundation.exit(ExitCodes.usage)
            }
            exit(withError: error)
        }
    }
}
