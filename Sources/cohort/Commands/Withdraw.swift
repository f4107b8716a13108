import ArgumentParser
import CohortKit
import CohortCore
import Foundation
import CohortCompliance

extension Cohort {
    struct Withdraw: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Withdraw a participant: stop, exclude or erase. Prints a signed receipt.",
            discussion: """
                Participants use their one-time token; staff use --staff with a reason. Modes:
                  stop     no new data; existing data stays in exports
                  exclude  no new data; left out of every later export
                  erase    records and identifiers deleted (consent rows and pseudonymous audit events stay)
                Escalation stop → exclude → erase is allowed, never the reverse. exclude and erase ask for confirmation unless --yes; \
                --dry-run shows the counts and changes nothing.

                Examples:
                  cohort withdraw --participant P-0007 --token ABCD-EFGH-… --mode stop \\
                    -w my-study
                  cohort withdraw --participant P-0012 --staff --reason "moved away" \\
                    --mode erase --yes -w my-study
                  cohort withdraw --participant P-0012 --staff --reason "check" \\
                    --mode erase --dry-run -w my-study
                """)

        @Option(help: "Study code.") var participant: String
        @Option(help: "The withdrawal token given at enrollment (participants).") var token: String?
        @Flag(help: "Withdraw as study staff (needs --reason).") var staff = false
        @Option(help: "Why (staff; audited — no identifiers).") var reason: String?
        @Option(help: "stop, exclude or erase.") var mode: WithdrawalMode
        @Flag(help: "Do not ask for confirmation.") var yes = false
        @Flag(help: "Show what would happen; change nothing.") var dryRun = false
        @Option(help: "Also write the signed receipt to this file.") var receipt: String?
        @OptionGroup var options: WorkspaceOptions

        func validate() throws {
            if staff == (token != nil) { throw ValidationError("give either --token (participant) or --staff --reason (staff)") }
            if staff, reason == nil { throw ValidationError("--staff needs --reason") }
        }

        func run() throws {
            let workspace = try options.open()
            let service = WithdrawalService(workspace: workspace)
            let requester: WithdrawalRequester = staff ? .staff(reason: reason ?? "") : .participant(token: token ?? "")
            if !dryRun, mode != .stop, !yes {
                let preview = try service.withdraw(code: participant, mode: mode, requester: requester, dryRun: true)
                if preview.alreadyWithdrawn == nil {
                    let what = mode == .erase ? "delete \(preview.records) records and all identifiers of" : "exclude from every later export"
                    guard Console.confirm("This will \(what) participant \(participant). Continue?") else {
                        Console.note("Nothing was changed. (Pass --yes to confirm without a prompt.)")
                        throw ExitCode(1)
                    }
                }
            }
            let outcome = try service.withdraw(code: participant, mode: mode, requester: requester, dryRun: dryRun)
            if let existing = outcome.alreadyWithdrawn {
                Console.print(existing.message)
                return
            }
            if outcome.dryRun {
                Console.print("Dry run: withdrawing \(participant) in \(mode.rawValue) mode would affect \(outcome.records) records and \(outcome.consents) consent(s)"
                    + (mode == .erase ? " (records and identifiers deleted)" : "") + ". Nothing was changed.")
                return
            }
            if let text = outcome.receiptText {
                Console.print(text)
                if let receipt {
                    guard FileManager.default.createFile(atPath: receipt, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
                        throw CohortError(.system, "cannot write the receipt", at: .init(file: receipt))
                    }
                    Console.note("Receipt written to \(receipt)")
                }
            }
        }
    }
}
