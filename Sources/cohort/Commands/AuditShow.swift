import ArgumentParser
import CohortKit

extension Cohort.Audit {
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List audit events.",
            discussion: """
                Names and reasons people typed are stored beside the chain, encrypted; the chain commits to their salted hashes. They \
                are shown here, or "[redacted]" once an erase deleted them. JSON output carries the committed values (to recompute \
                hashes) and the texts under "revealed".

                --since takes a date (YYYY-MM-DD, from the start of that day UTC) or an ISO 8601 instant; --since-event takes an \
                event number.

                Examples:
                  cohort audit show --since 2026-11-01 -w my-study
                  cohort audit show --since-event 10 --format json -w my-study
                """)

        @Option(help: ArgumentHelp("Show events at or after this date (YYYY-MM-DD) or ISO 8601 instant.", valueName: "date")) var since: DateOrInstant?
        @Option(help: ArgumentHelp("Show events from this event number.", valueName: "seq")) var sinceEvent: Int64?
        @Option(help: "How to print the data.") var format: OutputFormat = .table
        @OptionGroup var options: WorkspaceOptions

        func validate() throws {
            if since != nil, sinceEvent != nil { throw ValidationError("give --since (a date or instant) or --since-event (a number), not both") }
            if let sinceEvent, sinceEvent < 1 { throw ValidationError("--since-event counts from 1") }
        }

        func run() throws {
            let listing = AuditListing(workspace: try options.open(readOnly: true))
            let events = try listing.events(from: since.map { .instant($0.startOfDay) } ?? .event(sinceEvent ?? 1))
            try TableRenderer.print(format, header: AuditListing.header, rows: events.map(AuditListing.cells)) { try printJSON(events) }
        }
    }
}
