import ArgumentParser
import CohortKit
import Foundation

extension Cohort {
    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a workspace: study.db (or a PostgreSQL database) and the keystore (and load a protocol).",
            discussion: """
                Creates the workspace folder (mode 0700) with study.db (SQLite, WAL) and keys/ (study.secret, pii.key, \
                signing.pem, signing.pub.pem — all mode 0600). Refuses a folder that already has one.

                With --database (or COHORT_DATABASE_URL) the study lives in that PostgreSQL database, which must be \
                empty; the folder keeps keys/ and store.json (the URL without password: libpq reads the password from \
                PGPASSWORD or ~/.pgpass). Other coordinators join by copying the whole workspace folder. See docs/store.md.

                Examples:
                  cohort init -w my-study --protocol protocols/axspa-wearables.yaml
                  cohort init -w my-study
                  cohort protocol load protocols/minimal.yaml -w my-study
                  cohort init -w my-study \\
                    --database postgresql://coordinator@db.example.org/axspa
                """)

        @Option(name: [.customShort("w"), .long], help: "The workspace directory to create (default: $COHORT_WORKSPACE or the current directory).")
        var workspace: String?

        @Option(name: .customLong("dir"), help: .hidden) var deprecatedDir: String?

        @Option(help: "A protocol file to load right away.")
        var `protocol`: String?

        @Option(help: "Who is acting, for the audit trail (default: the OS user).")
        var actor: String?

        @Option(help: "An empty PostgreSQL database for the study (postgresql://user@host/db; default: $COHORT_DATABASE_URL, else study.db in the workspace).")
        var database: String?

        @OptionGroup var output: OutputOptions

        func validate() throws {
            if workspace != nil, deprecatedDir != nil { throw ValidationError("give -w/--workspace only (--dir is its old name)") }
        }

        func run() throws {
            let path = workspace ?? deprecatedDir ?? ProcessInfo.processInfo.environment["COHORT_WORKSPACE"] ?? "."
            if deprecatedDir != nil { Console.note("note: --dir is now -w/--workspace") }
            let url = URL(fileURLWithPath: path)
            let environment = ProcessInfo.processInfo.environment
            let databaseURL = database ?? environment[StoreConfiguration.environmentKey].flatMap { $0.isEmpty ? nil : $0 }
            let workspace = try Workspace.create(
                at: url, protocolURL: self.protocol.map { URL(fileURLWithPath: $0) }, actor: Workspace.actorName(explicit: actor), databaseURL: databaseURL)
            Console.print("Created workspace \(url.path)")
            Console.print("  database   \(workspace.databaseLocation)")
            Console.print("  keys       \(Workspace.keysDirectory(of: url).path)  (signing key \(workspace.signingKeyFingerprint))")
            if let pinned = try workspace.pinnedProtocolSummary() {
                Console.print("  protocol   \(pinned.id) revision \(pinned.revision)  sha256 \(pinned.sha256)")
            } else {
                Console.print("Next: cohort protocol load protocols/<study>.yaml -w \(ShellQuote.quote(path))")
            }
        }
    }
}
