import ArgumentParser
import CohortKit
import CohortCore
import Foundation

extension Cohort {
    struct Reminders: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List participants to remind and render the protocol's reminder for each (nothing is sent).",
            discussion: """
                Reminded: ongoing participants below a rule's threshold or who missed the last closed day, as of --as-of.

                Examples:
                  cohort reminders -w my-study
                  cohort reminders --out reminders/ -w my-study     # one file per participant
                  cohort reminders --site site-a -w my-study        # one site's participants
                """)

        @Option(help: ArgumentHelp("As of this date (YYYY-MM-DD) or ISO 8601 instant; default now.", valueName: "date")) var asOf: DateOrInstant?
        @Option(help: "Write one file per participant into this folder.") var out: String?
        @Option(help: "Only the participants of this site (default: every site).") var site: String?
        @Option(help: "Also write a mail-merge CSV (code,name,email,phone,address,message; mode 0600) to this file.") var mailMerge: String?
        @OptionGroup var options: WorkspaceOptions

        func run() throws {
            let workspace = try options.open()
            let reminders = try ComplianceService(workspace: workspace).reminders(asOf: asOf?.date ?? workspace.now(), site: site)
            if let mailMerge {
                try ReminderMessage.writeMailMerge(reminders, to: URL(fileURLWithPath: mailMerge))
            }
            if let out {
                let dir = URL(fileURLWithPath: out)
                try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                for r in reminders {
                    let url = dir.appendingPathComponent("\(r.code).txt")
                    guard FileManager.default.createFile(atPath: url.path, contents: Data(r.text.utf8), attributes: [.posixPermissions: 0o600]) else {
                        throw CohortError(.system, "cannot write the reminder", at: .init(file: url.path))
                    }
                }
                Console.print("Wrote \(reminders.count) reminder(s) to \(dir.path)")
            } else {
                for r in reminders { Console.print("=== \(r.code)\n\(r.text)") }
                Console.note("\(reminders.count) participant(s) to remind. Nothing was sent.")
            }
        }
    }
}
