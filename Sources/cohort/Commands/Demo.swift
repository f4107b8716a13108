import ArgumentParser
import CohortKit
import Foundation

extension Cohort {
    struct Demo: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run a demo study end to end in a fresh workspace.",
            discussion: """
                Creates the workspace (default ./cohort-demo; a previous demo there is replaced only when you confirm, or with --yes), loads the axial spondyloarthritis \
                protocol, enrolls synthetic participants with realistic fake identities, writes 90 days of synthetic app and \
                wearable data as CSV/NDJSON files and imports them through the same path `cohort data import` uses, records consent \
                (one participant re-consents to a new version), withdraws one participant with their token (exclude) and one by \
                staff (erase), computes compliance, exports a signed de-identified archive for a named recipient, verifies it, and \
                verifies the audit trail.

                Examples:
                  swift run cohort demo
                  cohort demo -w /tmp/demo --seed 7 --participants 20
                """)

        @Option(name: [.customShort("w"), .long], help: "The demo workspace directory (default: cohort-demo).") var workspace: String?
        @Option(name: .customLong("dir"), help: .hidden) var deprecatedDir: String?
        @Option(help: "Seed for the synthetic cohort (same seed, same people and data).") var seed: UInt64 = 42
        @Option(help: "How many participants to enroll.") var participants: Int = 50
        @Option(help: "Who is acting, for the audit trail.") var actor: String = "demo-coordinator"
        @Option(help: "Keep the generated roster and data files in this folder, outside the workspace (default: a temporary folder deleted after import).")
        var importFiles: String?
        @Option(help: "Run the demo on this empty PostgreSQL database (postgresql://user@host/db) instead of study.db.")
        var database: String?
        @Flag(help: "Replace a previous demo in the folder without asking.") var yes = false
        @OptionGroup var output: OutputOptions

        func validate() throws {
            guard (1...10_000).contains(participants) else { throw ValidationError("--participants must be between 1 and 10000") }
            if workspace != nil, deprecatedDir != nil { throw ValidationError("give -w/--workspace only (--dir is its old name)") }
        }

        func run() throws {
            // The protocol and templates are compiled in: the demo runs the same from any folder.
            let root = try ExampleFiles.temporaryCopy()
            defer { try? FileManager.default.removeItem(at: root) }
            let directory = URL(fileURLWithPath: workspace ?? deprecatedDir ?? "cohort-demo")
            if DemoRun.holdsPreviousDemo(directory), !yes {
                guard Console.confirm("\(directory.path) holds a previous demo; replace it (its workspace, keys and exports are deleted)?") else {
                    Console.note("Nothing was changed. (Pass --yes to replace it without a prompt, or -w to use another folder.)")
                    throw ExitCode(1)
                }
            }
            var demo = DemoRun(
                directory: directory, seed: seed, participants: participants, actor: actor, projectRoot: root,
                keepImportFilesIn: importFiles.map { URL(fileURLWithPath: $0, isDirectory: true) }, log: { Console.note("· " + $0) })
            demo.databaseURL = database
            demo.replacesPreviousDemo = true  // asked above, or --yes
            let summary = try demo.run()
            Console.print("")
            for line in summary.lines { Console.print(line) }
            if !summary.auditIntact || !summary.exportVerified { throw ExitCode(1) }
        }
    }
}
