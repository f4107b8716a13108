public import ArgumentParser
import CohortCrypto
import CohortCompliance
import CohortCore
import CohortKit
import Foundation

extension Cohort {
    struct ConsentCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "consent",
            abstract: "Record consents (history is kept), show consent status, render consent documents.",
            subcommands: [Record.self, Status.self, Render.self])

        struct Record: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Record a consent with the SHA-256 of the exact document text of that version.",
                discussion: """
                    Re-consenting adds a row and marks the earlier one superseded. Unknown versions, signing
                    before enrollment, or in the future are rejected.

                    Examples:
                      cohort consent record --participant P-0001 --version 1.0 --signature "typed:Zoë O'Brien" -w my-study
                      cohort consent record --participant P-0002 --version 1.1 --signed-at 2026-10-01T10:00:00+02:00 \\
                        --signature wet-ink:binder-3/page-12 --sharing broad -w my-study
                    """)

            @Option(help: "Study code.") var participant: String
            @Option(help: "Consent document version (listed in the protocol).") var version: String
            @Option(help: "When it was signed (ISO 8601; default: now).") var signedAt: String?
            @Option(help: "typed:NAME, drawn:FILE or wet-ink:REF (kept encrypted).") var signature: String?
            @Option(help: "broad or study-only.") var sharing: SharingScope = .studyOnly
            @OptionGroup var options: WorkspaceOptions

            func run() throws {
                let workspace = try options.open()
                var signed: Timestamp?
                if let signedAt {
                    guard let t = Timestamp.parse(signedAt, defaultTimeZone: nil) else {
                        throw CohortError.invalid("expected an ISO 8601 instant with offset, e.g. 2026-10-01T10:00:00+02:00", field: "signed-at")
                    }
                    signed = t
                }
                let change = try ConsentService(workspace: workspace).record(
                    code: participant, version: version, signedAt: signed, signature: signature, sharing: sharing)
                Console.print(
                    "Recorded consent \(change.consent.version) for \(participant) (document sha256 \(change.consent.documentSHA256.prefix(16))…)"
                        + (change.supersededIDs.isEmpty ? "" : "; superseded \(change.supersededIDs.count) earlier consent(s)"))
                if change.reconsentDue { Console.note("note: this version is not the current one; re-consent is due under the protocol's policy") }
            }
        }

        struct Status: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Every participant's consent version, date, sharing scope and whether re-consent is due.",
                discussion: "Examples:\n  cohort consent status -w my-study\n  cohort consent status --format csv -w my-study")

            @Option(help: "table, json or csv.") var format: OutputFormat = .table
            @OptionGroup var options: WorkspaceOptions

            func run() throws {
                let rows = try ConsentService(workspace: try options.open(readOnly: true)).status()
                switch format {
                case .table: Console.print(ConsentStatusRow.table(rows).render())
                case .csv: Console.print(TableRenderer.csv(ConsentStatusRow.csvHeader, rows.map(\.cells)))
                case .json: Console.print(String(decoding: try JSONEncoder.pretty.encode(rows), as: UTF8.self))
                }
            }
        }

        struct Render: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Render a consent document with the study's details (the text consent rows hash).",
                discussion: "Examples:\n  cohort consent render --version 1.0 -w my-study\n  cohort consent render --version 1.0 -w my-study | sha256sum")

            @Option(help: "Consent document version.") var version: String
            @OptionGroup var options: WorkspaceOptions

            func run() throws {
                let text = try ConsentService(workspace: try options.open()).render(version: version)
                FileHandle.standardOutput.write(Data(text.utf8))
            }
        }
    }

    struct Withdraw: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Withdraw a participant: stop, exclude or erase. Prints a signed receipt.",
            discussion: """
                Participants use their one-time token; staff use --staff with a reason. Modes:
                  stop     no new data; existing data stays in exports
                  exclude  no new data; left out of every later export
                  erase    records and identifiers deleted (consent rows and pseudonymous audit events stay)
                Escalation stop → exclude → erase is allowed, never the reverse. exclude and erase ask
                for confirmation unless --yes; --dry-run shows the counts and changes nothing.

                Examples:
                  cohort withdraw --participant P-0007 --token ABCD-EFGH-… --mode stop -w my-study
                  cohort withdraw --participant P-0012 --staff --reason "moved away" --mode erase --yes -w my-study
                  cohort withdraw --participant P-0012 --staff --reason "check" --mode erase --dry-run -w my-study
                """)

        @Option(help: "Study code.") var participant: String
        @Option(help: "The withdrawal token given at enrollment (participants).") var token: String?
        @Flag(help: "Withdraw as study staff (needs --reason).") var staff = false
        @Option(help: "Why (staff; audited — no identifiers).") var reason: String?
        @Option(help: "stop, exclude or erase.") var mode: WithdrawalMode
        @Flag(help: "Do not ask for confirmation.") var yes = false
        @Flag(help: "Show what would happen; change nothing.") var dryRun = false
        @Option(help: "Also write the signed receipt to this file.") var receipt: String?
        @OptionGroup var options: WorkspaceOptions

        func validate() throws {
            if staff == (token != nil) { throw ValidationError("give either --token (participant) or --staff --reason (staff)") }
            if staff, reason == nil { throw ValidationError("--staff needs --reason") }
        }

        func run() throws {
            let workspace = try options.open()
            let service = WithdrawalService(workspace: workspace)
            let requester: WithdrawalRequester = staff ? .staff(reason: reason ?? "") : .participant(token: token ?? "")
            if !dryRun, mode != .stop, !yes {
                let preview = try service.withdraw(code: participant, mode: mode, requester: requester, dryRun: true)
                if preview.alreadyWithdrawn == nil {
                    let what = mode == .erase ? "delete \(preview.records) records and all identifiers of" : "exclude from every later export"
                    guard Console.confirm("This will \(what) participant \(participant). Continue?") else {
                        Console.note("Nothing was changed. (Pass --yes to confirm without a prompt.)")
                        throw ExitCode(1)
                    }
                }
            }
            let outcome = try service.withdraw(code: participant, mode: mode, requester: requester, dryRun: dryRun)
            if let existing = outcome.alreadyWithdrawn {
                Console.print(existing.message)
                return
            }
            if outcome.dryRun {
                Console.print("Dry run: withdrawing \(participant) in \(mode.rawValue) mode would affect \(outcome.records) records and \(outcome.consents) consent(s)"
                    + (mode == .erase ? " (records and identifiers deleted)" : "") + ". Nothing was changed.")
                return
            }
            if let text = outcome.receiptText {
                Console.print(text)
                if let receipt {
                    guard FileManager.default.createFile(atPath: receipt, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
                        throw CohortError(.system, "cannot write the receipt", at: .init(file: receipt))
                    }
                    Console.note("Receipt written to \(receipt)")
                }
            }
        }
    }

    struct Receipt: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify signed withdrawal receipts.",
            subcommands: [Verify.self])

        struct Verify: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Check a receipt's Ed25519 signature with the study's public key.",
                discussion: "Examples:\n  cohort receipt verify receipt.txt -w my-study\n  cohort receipt verify receipt.txt --public-key signing.pub.pem")

            @Argument(help: "The receipt file.") var file: String
            @Option(help: "The study's public key (default: the workspace's).") var publicKey: String?
            @OptionGroup var options: WorkspaceOptions

            func run() throws {
                guard let data = FileManager.default.contents(atPath: file) else {
                    throw CohortError(.notFound, "cannot read the receipt", at: .init(file: file))
                }
                let key: Ed25519PublicKey
                if let publicKey {
                    key = try PublicKeyFile.load(publicKey)
                } else {
                    key = try options.open().keystore.publicKey
                }
                do {
                    let receipt = try ReceiptDocument.verify(String(decoding: data, as: UTF8.self), publicKey: key)
                    Console.print("✔ receipt \(receipt.receiptID.uuidString.lowercased()) is authentic: \(receipt.participantCode) withdrew (\(receipt.mode.rawValue)) at \(receipt.withdrawnAt.iso8601), signed by \(key.fingerprint)")
                } catch let error as CohortError {
                    Console.print("✘ \(error.message)")
                    throw ExitCode(1)
                }
            }
        }
    }

    struct Compliance: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Compliance per participant, per rule and per study week, with a cohort summary.",
            discussion: """
                Unit: the participant-day in the participant's time zone. Days counted: from enrollment to the
                earliest of study end, the day before withdrawal, or the last fully closed day (today never
                counts). Zero days → N/A, never 100%. Compliant: rate ≥ the rule's threshold.

                Examples:
                  cohort compliance -w my-study
                  cohort compliance --as-of 2026-11-01 --below 0.8 --format csv -w my-study
                """)

        @Option(help: "Report as of this date (YYYY-MM-DD) or instant; default now.") var asOf: String?
        @Option(help: "Only participants below this rate (0.8 or 80%).") var below: String?
        @Option(help: "table, json or csv.") var format: OutputFormat = .table
        @OptionGroup var options: WorkspaceOptions

        func run() throws {
            let workspace = try options.open(readOnly: true)
            var report = try ComplianceService(workspace: workspace).report(asOf: try ComplianceService.asOf(asOf, now: workspace.now()))
            if let below { report = report.filtered(below: try ComplianceReport.parseRate(below)) }
            switch format {
            case .table: Console.print(report.tableText())
            case .csv: Console.print(TableRenderer.csv(report.csvRows()[0], Array(report.csvRows().dropFirst())))
            case .json: FileHandle.standardOutput.write(try report.jsonData() + Data("\n".utf8))
            }
        }
    }

    struct Reminders: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List participants to remind and render the protocol's reminder for each (nothing is sent).",
            discussion: """
                Reminded: ongoing participants below a rule's threshold or who missed the last closed day.

                Examples:
                  cohort reminders -w my-study
                  cohort reminders --out reminders/ -w my-study     # one file per participant
                """)

        @Option(help: "As of this date (YYYY-MM-DD) or instant.") var asOf: String?
        @Option(help: "Write one file per participant into this folder.") var out: String?
        @Option(help: "Also write a mail-merge CSV (code,name,email,phone,address,message; mode 0600) to this file.") var mailMerge: String?
        @OptionGroup var options: WorkspaceOptions

        func run() throws {
            let workspace = try options.open()
            let reminders = try ComplianceService(workspace: workspace).reminders(asOf: try ComplianceService.asOf(asOf, now: workspace.now()))
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

extension SharingScope: ExpressibleByArgument {}
extension WithdrawalMode: ExpressibleByArgument {}
extension ExportCompression: ExpressibleByArgument {}
extension FHIRLayout: ExpressibleByArgument {}
