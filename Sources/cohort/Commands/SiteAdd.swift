import ArgumentParser
import CohortKit

extension Cohort.SiteCommand {
    struct SiteAdd: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Create the group role cohort_site_NAME with the table privileges a coordinator needs (idempotent).",
            discussion: """
                Examples:
                  cohort site add site-a \\
                    --database postgresql://study_owner@db.example.org/axspa
                  cohort site add site-a --dry-run        # print the SQL for a DBA
                """)

        @Argument(help: "The site's name: 1–51 of a-z, 0-9, '-' and '_' (as given at enrollment with --site).") var name: String
        @OptionGroup var database: SiteDatabaseOptions

        func run() throws {
            database.report(try SiteAdministration(databaseURL: try database.url).addSite(name, dryRun: database.dryRun))
        }
    }
}
