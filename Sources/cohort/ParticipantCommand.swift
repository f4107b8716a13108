import ArgumentParser
import CohortCore
import CohortKit
import Foundation

extension Cohort {
    struct ParticipantCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "participant",
            abstract: "Enroll participants, import a roster, list the roster.",
            subcommands: [Enroll.self, Import.self, List.self])

        struct Enroll: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Enroll one participant; prints their one-time withdrawal token.",
                discussion: """
                    Identifiers are stored encrypted (AES-256-GCM). The withdrawal token is printed once and
                    stored only as a salted hash: hand it to the participant.

                    Example:
                      cohort participant enroll --code P-0001 --name "Jane Roe" --birth-date 1984-05-02 \\
                        --sex female --zip 02139 --time-zone America/New_York --enrolled-on 2026-09-01 \\
                        --device "Jane's Apple Watch"
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
            @Option(help: "table or json.") var format: OutputFormat = .table
            @OptionGroup var options: WorkspaceOptions

            func run() throws {
                let workspace = try options.open()
                let today = CivilDate(workspace.now(), in: TimeZone(identifier: "UTC") ?? .current).description
                let entry = RosterEntry(
                    code: code, name: name, email: email, phone: phone, birthDate: birthDate, sex: sex, address: address, zip: zip, mrn: mrn,
                    timeZone: timeZone, enrolledOn: enrolledOn ?? today, devices: devices)
                let enrolled = try Roster(workspace: workspace).enroll([(entry, nil)], file: nil, source: "flags")
                try printTokens(enrolled, format: format)
            }
        }

        struct Import: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Enroll every participant of a roster CSV (all or nothing).",
                discussion: """
                    Header: code,name,email,phone,birth_date,sex,address,zip,mrn,time_zone,enrolled_on,devices
                    (code, name, time_zone and enrolled_on required; devices separated by ';'). Any bad line
                    stores nothing and names file:line: field. Prints each participant's withdrawal token once.

                    Example:
                      cohort participant import roster.csv --format csv -w my-study > tokens.csv
                    """)

            @Argument(help: "The roster CSV.") var file: String
            @Option(help: "table, json or csv.") var format: OutputFormat = .table
            @OptionGroup var options: WorkspaceOptions

            func run() throws {
                let workspace = try options.open()
                let enrolled = try Roster(workspace: workspace).importCSV(URL(fileURLWithPath: file))
                try printTokens(enrolled, format: format)
                Console.note("Enrolled \(enrolled.count) participant(s). Hand each their withdrawal token: it is not shown again.")
            }
        }

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "List participants: code, status, enrollment date, consent state.",
                discussion: """
                    Identifiers are shown only with --show-identifiers (the coordinator's view).

                    Examples:
                      cohort participant list
                      cohort participant list --format csv --show-identifiers
                    """)

            @Flag(help: "Decrypt and show direct identifiers.") var showIdentifiers = false
            @Option(help: "table, json or csv.") var format: OutputFormat = .table
            @OptionGroup var options: WorkspaceOptions

            func run() throws {
                let workspace = try options.open(readOnly: true)
                let rows = try ParticipantListing(workspace: workspace).rows(withIdentities: showIdentifiers)
                var header = ["code", "status", "enrolled_on", "time_zone", "sex", "consent", "records"]
                if showIdentifiers { header += ["name", "email", "phone", "birth_date", "zip", "mrn"] }
                let table = rows.map { r -> [String] in
                    var cells = [r.code, r.status, r.enrolledOn, r.timeZone, r.sex, r.consent, String(r.records)]
                    if showIdentifiers, let i = r.identity {
                        cells += [i.name, i.email ?? "", i.phone ?? "", i.birthDate?.description ?? "", i.zip ?? "", i.mrn ?? ""]
                    } else if showIdentifiers {
                        cells += ["(erased)", "", "", "", "", ""]
                    }
                    return cells
                }
                switch format {
                case .table: Console.print(TableRenderer.table(header, table))
                case .csv: Console.print(TableRenderer.csv(header, table))
                case .json: Console.print(String(decoding: try JSONEncoder.pretty.encode(rows), as: UTF8.self))
                }
            }
        }
    }
}

func printTokens(_ enrolled: [EnrolledParticipant], format: OutputFormat) throws {
    let header = ["code", "withdrawal_token"]
    let rows = enrolled.map { [$0.code, $0.withdrawalToken] }
    switch format {
    case .table: Console.print(TableRenderer.table(header, rows))
    case .csv: Console.print(TableRenderer.csv(header, rows))
    case .json: Console.print(String(decoding: try JSONEncoder.pretty.encode(enrolled), as: UTF8.self))
    }
}
