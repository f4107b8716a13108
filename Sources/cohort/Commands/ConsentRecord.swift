import ArgumentParser
import CohortKit
import CohortCore
import CohortCompliance

extension Cohort.ConsentCommand {
    struct Record: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Record a consent with the SHA-256 of the exact document text of that version.",
            discussion: """
                Re-consenting adds a row and marks the earlier one superseded. Unknown versions, signing before enrollment, or in the \
                future are rejected.

                --sharing is what the participant chose, and it decides who may receive their data: with the default scopes, \
                broad allows the study team and outside recipients, study-only the study team alone, no-sharing nobody (the \
                protocol's consent.sharing_scopes may define more). It has no default: record what the participant agreed to.

                Examples:
                  cohort consent record --participant P-0001 --consent-version 1.0 \\
                    --sharing study-only \\
                    --signature "typed:Zoë O'Brien" -w my-study
                  cohort consent record --participant P-0002 --consent-version 1.1 \\
                    --signed-at 2026-10-01T10:00:00+02:00 \\
                    --signature wet-ink:binder-3/page-12 --sharing broad -w my-study
                """)

        @Option(help: "Study code.") var participant: String
        @OptionGroup var version: ConsentVersionOption
        @Option(help: ArgumentHelp("When it was signed (ISO 8601 with offset; default: now).", valueName: "instant")) var signedAt: Instant?
        @Option(help: "typed:NAME, drawn:FILE or wet-ink:REF (kept encrypted).") var signature: String?
        @Option(help: ArgumentHelp("The sharing scope the participant chose: broad, study-only, no-sharing, or one the protocol defines.", valueName: "scope"))
        var sharing: SharingScope
        @OptionGroup var options: WorkspaceOptions

        func run() throws {
            let workspace = try options.open()
            let change = try ConsentService(workspace: workspace).record(
                code: participant, version: version.value, signedAt: signedAt?.timestamp, signature: signature, sharing: sharing)
            Console.print(
                "Recorded consent \(change.consent.version) for \(participant) (document sha256 \(change.consent.documentSHA256.prefix(16))…)"
                    + (change.supersededIDs.isEmpty ? "" : "; superseded \(change.supersededIDs.count) earlier consent(s)"))
            if change.reconsentDue { Console.note("note: this version is not the current one; re-consent is due under the protocol's policy") }
        }
    }
}
