import ArgumentParser
import CohortCore
import CohortKit
import CohortStore
import Foundation

extension Cohort {
    struct Audit: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify and list the hash-linked audit trail.",
            subcommands: [Verify.self, Show.self])

        struct Verify: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Recompute the chain and check signed checkpoints; name the first broken event.",
                discussion: """
                    Each event's hash = SHA-256(previous hash ‖ canonical JSON of the event). Checkpoints sign
                    the head with the study's Ed25519 key, so removing the newest events is caught too.
                    Exits 0 when intact, 1 when broken.

                    Example:
                      cohort audit verify -w my-study
                    """)

            @Option(help: "table or json.") var format: OutputFormat = .table
            @OptionGroup var options: WorkspaceOptions

            func run() throws {
                let workspace = try options.open()
                let result = try workspace.store.verifyAudit(publicKey: workspace.keystore.publicKey)
                if format == .json {
                    Console.print(String(decoding: try JSONEncoder.pretty.encode(result), as: UTF8.self))
                } else if let problem = result.firstProblem {
                    Console.print("✘ audit chain broken: \(problem)")
                } else {
                    Console.print("✔ audit chain intact: \(result.events) events, \(result.checkpoints) signed checkpoints, head \(result.headSeq) \(result.headHash)")
                }
                if !result.isIntact { throw ExitCode(1) }
            }
        }

        struct Show: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "List audit events.",
                discussion: "Examples:\n  cohort audit show --since 10\n  cohort audit show --format json")

            @Option(help: "First event number to show.") var since: Int64 = 1
            @Option(help: "table, json or csv.") var format: OutputFormat = .table
            @OptionGroup var options: WorkspaceOptions

            func run() throws {
                let workspace = try options.open()
                let events = try workspace.store.auditEvents(since: since)
                let header = ["seq", "at", "actor", "action", "subject", "details", "hash"]
                let rows = events.map { e in
                    [String(e.seq), e.at, e.actor, e.action, e.subject ?? "",
                     e.details.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "), String(e.hash.prefix(16))]
                }
                switch format {
                case .table: Console.print(TableRenderer.table(header, rows))
                case .csv: Console.print(TableRenderer.csv(header, rows))
                case .json: Console.print(String(decoding: try JSONEncoder.pretty.encode(events), as: UTF8.self))
                }
            }
        }
    }
}
