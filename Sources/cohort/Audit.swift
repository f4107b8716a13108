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
                    the head with the study's Ed25519 key, and the newest signed head is also kept outside the
                    database in audit.head, so removing the newest events (with their checkpoints), rolling
                    study.db back to an older copy or replacing it is caught too. Redacted texts (erased reasons)
                    do not break the chain: it commits to their salted hashes. Opens the database read-only.
                    Exits 0 when intact, 1 when broken.

                    With --export-manifest, each export manifest's signed audit checkpoint is compared too:
                    the database must still hold the event it names with the same hash (the newest export
                    catches a trail cut back even if audit.head was replaced along with study.db).

                    Examples:
                      cohort audit verify -w my-study
                      cohort audit verify -w my-study --export-manifest exports/*.manifest.json
                    """)

            @Option(help: "table or json.") var format: OutputFormat = .table
            @Option(name: .customLong("export-manifest"), parsing: .upToNextOption, help: "Export manifests whose signed checkpoint the trail must still hold.")
            var exportManifests: [String] = []
            @OptionGroup var options: WorkspaceOptions

            func run() throws {
                let workspace = try options.open(readOnly: true, checkingAuditHead: false)
                var result = try workspace.verifyAudit()
                let exportChecks = workspace.checkExportCheckpoints(exportManifests.map { URL(fileURLWithPath: $0) })
                if result.isIntact, let failed = exportChecks.first(where: { $0.problem != nil }) {
                    result.firstProblem = "\(failed.manifest): \(failed.problem ?? "")"
                }
                for check in exportChecks where format != .json {
                    Console.note((check.problem == nil ? "✔ " : "✘ ") + "\(check.manifest): " + (check.problem ?? "the trail holds event \(check.seq ?? 0) as signed"))
                }
                if format == .json {
                    Console.print(String(decoding: try JSONEncoder.pretty.encode(result), as: UTF8.self))
                } else if let problem = result.firstProblem {
                    Console.print("✘ audit chain broken: \(problem)")
                } else {
                    let head = result.auditHeadSeq.map { ", audit.head at event \($0)" } ?? ", no audit.head (workspace made before it existed)"
                    Console.print(
                        "✔ audit chain intact: \(result.events) events, \(result.checkpoints) signed checkpoints\(head), head \(result.headSeq) \(result.headHash)")
                }
                if !result.isIntact { throw ExitCode(1) }
            }
        }

        struct Show: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "List audit events.",
                discussion: """
                    Names and reasons people typed are stored beside the chain, encrypted; the chain commits to
                    their salted hashes. They are shown here, or "[redacted]" once an erase deleted them.
                    JSON output carries the committed values (to recompute hashes) and the texts under "revealed".

                    Examples:
                      cohort audit show --since 10
                      cohort audit show --format json
                    """)

            @Option(help: "First event number to show.") var since: Int64 = 1
            @Option(help: "table, json or csv.") var format: OutputFormat = .table
            @OptionGroup var options: WorkspaceOptions

            func run() throws {
                let workspace = try options.open(readOnly: true)
                let events = try workspace.store.auditEvents(since: since)
                let header = ["seq", "at", "actor", "action", "subject", "details", "hash"]
                let rows = events.map { e in
                    [String(e.seq), e.at, e.displayActor, e.action, e.subject ?? "",
                     e.displayDetails.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "), String(e.hash.prefix(16))]
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
