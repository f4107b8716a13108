import ArgumentParser
import CohortKit
import CohortCore
import CohortStore
import Foundation

extension Cohort.ParticipantCommand {
    struct Enroll: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Enroll one participant; prints their one-time withdrawal token.",
            discussion: """
                Identifiers are stored encrypted (AES-256-GCM). The withdrawal token is printed once (or written to --tokens FILE) and \
                stored only as a salted hash: hand it to the participant.

                Example:
                  cohort participant enroll --code P-0001 --name "Jane Roe" \\
                    --birth-date 1984-05-02 --sex female --zip 02139 \\
                    --time-zone America/New_York --enrolled-on 2026-09-01 \\
                    --device "Jane's Apple Watch" --site site-a -w my-study
                """)

        @Option(help: "Study code, e.g. P-0001.") var code: String
        @Option(help: "Full name.") var name: String
        @Option(help: "Email address.") var email: String?
        @Option(help: "Phone number.") var phone: String?
        @Option(help: "Date of birth, YYYY-MM-DD.") var birthDate: String?
        @Option(help: "female, male, other or unknown.") var sex: String = "unknown"
        @Option(help: "Street address.") var address: String?
        @Option(help: "ZIP code.") var zip: String?
        @Option(help: "Medical record number.") var mrn: String?
        @Option(help: "IANA time zone, e.g. Europe/Berlin.") var timeZone: String
        @Option(help: "Enrollment date, YYYY-MM-DD (default: today, UTC).") var enrolledOn: String?
        @Option(name: .customLong("device"), help: "A device name or serial (repeatable).") var devices: [String] = []
        @Option(help: "The study site (multi-site studies): 1–64 of a-z, 0-9, '-' and '_'.") var site: String?
        @Option(help: "How to print the data.") var format: OutputFormat = .table
        @OptionGroup var tokens: TokenOutput
        @OptionGroup var options: WorkspaceOptions

        func run() throws {
            try tokens.checkDestination()
            let workspace = try options.open()
            let today = CivilDate(workspace.now(), in: TimeZone(identifier: "UTC") ?? .current).description
            let entry = RosterEntry(
                code: code, name: name, email: email, phone: phone, birthDate: birthDate, sex: sex, address: address, zip: zip, mrn: mrn,
                timeZone: timeZone, enrolledOn: enrolledOn ?? today, devices: devices, site: site)
            let enrolled = try Roster(workspace: workspace).enroll([(entry, nil)], file: nil, source: "flags")
            try tokens.write(enrolled, format: format)
        }
    }
}
