import ArgumentParser
import CohortKit
import Foundation
import CohortCore
import CohortCrypto
import CohortStore

extension Cohort {
    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a workspace: study.db and the keystore (and load a protocol).",
            discussion: """
                Creates DIR (mode 0700) with study.db (SQLite, WAL) and keys/ (study.secret, pii.key,
                signing.pem, signing.pub.pem — all mode 0600). Refuses a directory that already has one.

                Examples:
                  cohort init --dir my-study --protocol protocols/axspa-wearables.yaml
                  cohort init --dir my-study && cohort protocol load protocols/minimal.yaml -w my-study
                """)

        @Option(help: "The workspace directory to create.")
        var dir: String = "."

        @Option(help: "A protocol file to load right away.")
        var `protocol`: String?

        @Option(help: "Who is acting, for the audit trail (default: the OS user).")
        var actor: String?

        func run() throws {
            let options = try WorkspaceOptions.parse(actor.map { ["--actor", $0] } ?? [])
            let url = URL(fileURLWithPath: dir)
            let workspace = try Workspace.create(at: url, protocolURL: self.protocol.map { URL(fileURLWithPath: $0) }, actor: options.actorName)
            Console.print("Created workspace \(url.path)")
            Console.print("  database   \(workspace.store.url.path)")
            Console.print("  keys       \(Workspace.keysDirectory(of: url).path)  (signing key \(workspace.keystore.fingerprints.signing))")
            if let pinned = try workspace.store.currentProtocol() {
                Console.print("  protocol   \(pinned.studyProtocol.id) revision \(pinned.studyProtocol.revision)  sha256 \(pinned.sha256)")
            } else {
                Console.print("Next: cohort protocol load protocols/<study>.yaml -w \(dir)")
            }
        }
    }
}
