import ArgumentParser
import CohortKit

extension Cohort.SiteCommand {
    struct SiteGrant: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "grant",
            abstract: "Make a coordinator's login role a member of a site's group role, or of cohort_study_wide.",
            discussion: """
                The site's group must exist (`cohort site add`) and so must the login role (createuser). A role may be granted \
                several sites; --study-wide shows every site (for exports across sites and for monitors).

                Examples:
                  cohort site grant site-a --role alice \\
                    --database postgresql://study_owner@db.example.org/axspa
                  cohort site grant --study-wide --role monitor \\
                    --database postgresql://study_owner@db.example.org/axspa
                """)

        @Argument(help: "The site's name (omit with --study-wide).") var name: String?
        @Option(help: "The coordinator's PostgreSQL login role.") var role: String
        @Flag(help: "Grant cohort_study_wide (every site) instead of one site.") var studyWide = false
        @OptionGroup var database: SiteDatabaseOptions

        func validate() throws {
            if studyWide, name != nil { throw ValidationError("give a site name or --study-wide, not both") }
            if !studyWide, name == nil { throw ValidationError("give a site name, or --study-wide for every site") }
        }

        func run() throws {
            database.report(try SiteAdministration(databaseURL: try database.url).grant(site: studyWide ? nil : name, role: role, dryRun: database.dryRun))
        }
    }
}
