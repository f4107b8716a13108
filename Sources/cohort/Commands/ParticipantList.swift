import ArgumentParser
import CohortKit
import CohortCore

extension Cohort.ParticipantCommand {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List participants: code, status, enrollment date, consent state.",
            discussion: """
                Identifiers are shown only with --show-identifiers (the coordinator's view).

                Examples:
                  cohort participant list -w my-study
                  cohort participant list --format csv --show-identifiers -w my-study
                  cohort participant list --site site-a -w my-study
                """)

        @Flag(help: "Decrypt and show direct identifiers.") var showIdentifiers = false
        @Option(help: "Only the participants of this site (default: every site).") var site: String?
        @Option(help: "How to print the data.") var format: OutputFormat = .table
        @OptionGroup var options: WorkspaceOptions

        func run() throws {
            let workspace = try options.open(readOnly: true)
            let rows = try ParticipantListing(workspace: workspace).rows(withIdentities: showIdentifiers, site: site)
            var header = ["code", "site", "status", "enrolled_on", "time_zone", "sex", "consent", "records"]
            if showIdentifiers { header += ["name", "email", "phone", "birth_date", "address", "zip", "mrn", "devices"] }
            let table = rows.map { r -> [String] in
                var cells = [r.code, r.site ?? "", r.status, r.enrolledOn, r.timeZone, r.sex, r.consent, String(r.records)]
                if showIdentifiers, let i = r.identity {
                    cells += [
                        i.name, i.email ?? "", i.phone ?? "", i.birthDate?.description ?? "", i.address ?? "", i.zip ?? "", i.mrn ?? "",
                        i.devices.joined(separator: "; "),
                    ]
                } else if showIdentifiers {
                    cells += ["(erased)", "", "", "", "", "", "", ""]
                }
                return cells
            }
            try TableRenderer.print(format, header: header, rows: table) { try printJSON(rows) }
        }
    }
}
