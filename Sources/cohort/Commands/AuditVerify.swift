import ArgumentParser
import CohortKit
import Foundation
import CohortStore

extension Cohort.Audit {
    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Recompute the chain and check signed checkpoints; name the first broken event.",
            discussion: """
                Each event's hash = SHA-256(previous hash ‖ canonical JSON of the event). Checkpoints sign the head with the study's \
                Ed25519 key, and the newest signed head is also kept outside the database in audit.head, so removing the newest \
                events (with their checkpoints), rolling study.db back to an older copy or replacing it is caught too. Redacted \
                texts (erased reasons) do not break the chain: it commits to their salted hashes. Opens the database read-only. \
                Exits 0 when intact, 1 when broken.

                With --export-manifest, each export manifest's signed audit checkpoint is compared too: the database must still hold \
                the event it names with the same hash (the newest export catches a trail cut back even if audit.head was replaced \
                along with study.db).

                Examples:
                  cohort audit verify -w my-study
                  cohort audit verify -w my-study --export-manifest exports/*.manifest.json
                """)

        @Option(help: "How to report the result.") var format: ReportFormat = .table
        @Option(name: .customLong("export-manifest"), parsing: .upToNextOption, help: "Export manifests whose signed checkpoint the trail must still hold.")
        var exportManifests: [String] = []
        @OptionGroup var options: WorkspaceOptions

        func validate() throws { try format.refusingCSV("audit verify") }

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
                try printJSON(result)
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
}
