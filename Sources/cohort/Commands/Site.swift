import ArgumentParser
import CohortKit
import Foundation

extension Cohort {
    /// `cohort site`: PostgreSQL roles for a multi-site study.
    struct SiteCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "site",
            abstract: "Multi-site studies on PostgreSQL: a database role per site, and coordinators' roles granted to them.",
            discussion: """
                Row-level security shows a coordinator's database role only the participants (and their consents, withdrawals and \
                records) of the sites it is a member of; the audit trail stays readable by every coordinator. Run as the owner of \
                the study's tables (the workspace's own database URL); creating roles needs CREATEROLE. See docs/multi-site.md.
                """,
            subcommands: [SiteAdd.self, SiteGrant.self, SiteInvite.self, SiteJoin.self, SiteRotateKey.self, SiteRevokeKey.self])
    }
}

/// Where the study database is: `--database`, else `COHORT_DATABASE_URL`, else the workspace's
/// `store.json`.
struct SiteDatabaseOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The study database's URL, as the owner of its tables (default: $COHORT_DATABASE_URL, else the workspace's store.json).",
            valueName: "url"))
    var database: String?
    @Option(name: [.customShort("w"), .long], help: "The workspace whose store.json names the database (default: $COHORT_WORKSPACE or the current directory).")
    var workspace: String?
    @Flag(help: "Print the SQL instead of running it (nothing is sent to the server).") var dryRun = false

    var url: String? {
        get throws {
            let environment = ProcessInfo.processInfo.environment
            if let url = database ?? environment["COHORT_DATABASE_URL"] { return url }
            let directory = URL(fileURLWithPath: workspace ?? environment["COHORT_WORKSPACE"] ?? FileManager.default.currentDirectoryPath)
            return try StoreConfiguration.load(from: directory)?.url
        }
    }

    /// Prints the change: the SQL for a dry run, else what was done.
    func report(_ change: SiteChange) {
        if change.applied {
            Console.print("Done: \(change.summary).")
        } else {
            Console.print("-- dry run: nothing was sent; run as the owner of the study's tables (or a superuser)")
            Console.print("BEGIN;")
            for statement in change.statements { Console.print(statement + ";") }
            Console.print("COMMIT;")
            Console.print("-- then: \(change.summary)")
        }
    }
}
