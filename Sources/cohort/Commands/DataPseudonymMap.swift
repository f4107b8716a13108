import ArgumentParser
import CohortKit
import Foundation

extension Cohort.DataCommand {
    struct PseudonymMap: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pseudonym-map",
            abstract: "Write one export recipient's pseudonym → study code map (to re-import its FHIR export elsewhere).",
            discussion: """
                Writes user_id,participant,shift_days (user_id = the recipient's pseudonym; shift_days = the day offset the \
                recipient's dates were shifted by), mode 0600. The file re-identifies that recipient's data: keep it with the \
                keys, never with an export. A fresh workspace with the same roster then re-imports the export with: \
                cohort data import --from fhir DIR --user-map FILE

                Example:
                  cohort data pseudonym-map --recipient lab-b --out lab-b-map.csv -w my-study
                """)

        @Option(help: "The export recipient.") var recipient: String
        @Option(help: "Where to write the CSV.") var out: String
        @OptionGroup var options: WorkspaceOptions

        func run() throws {
            let workspace = try options.open()
            let n = try CohortKit.PseudonymMap.write(workspace: workspace, recipient: recipient, to: URL(fileURLWithPath: out))
            Console.print("\(out): \(n) participants (keep this file private: it links pseudonyms to study codes)")
        }
    }
}
