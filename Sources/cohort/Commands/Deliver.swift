import ArgumentParser
import CohortDelivery
import CohortKit
import Foundation

extension Cohort {
    struct Deliver: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Deliver an export to the recipient over SFTP, with a pinned host key, and record it in the audit trail.",
            discussion: """
                Sends the export's files — the encrypted X.tar.gz.p7m (or the X.tar.gz of an unencrypted export), its signature, \\
                and its manifest last — to sftp://USER@HOST[:PORT]/PATH (an absolute folder on the server, or /~/dir under the \\
                login's home; created when missing). The connection is the system OpenSSH client in batch mode: the server's host \\
                key must be in --known-hosts (an unknown or changed key refuses the delivery before any credential or byte is \\
                sent, and the error shows the key's SHA256 fingerprint); authentication is by key only (--identity, else your \\
                ssh keys); your ssh configuration is not read.

                Before sending, the manifest's signature is checked with the workspace's key and every file against it. Files go \\
                to temporary names (.NAME.cohort-partial); a second connection reads each back and compares its SHA-256, then \\
                renames it. An interrupted delivery resumes where it stopped when run again (a partial upload that is not a \\
                prefix of the file is restarted); a mismatch removes the upload and fails. Afterwards the folder holds exactly \\
                the three files. A file already there with the same SHA-256 is left as it is; a different one refuses.

                The audit trail records export.delivered (archive and encrypted-file SHA-256, host, port, folder, host key \\
                fingerprint, bytes, who, when) or export.delivery_failed (reason: unknown host key, changed host key, \\
                authentication, network, read-back mismatch…; the fingerprint seen). Never a credential or the login name.

                Exit codes: 0 delivered; 3 bad --to; 4 a file not found; 5 a different file at the destination; 6 host key or \\
                authentication refused; 7 manifest, file or read-back mismatch; 10 network or server failure.

                Examples:
                  ssh-keyscan -p 2222 portal.example.org > portal_known_hosts
                  cohort deliver exports/axspa-wearables-20261120T120000Z.manifest.json \\
                    --to sftp://coordinator@portal.example.org:2222/inbox/axspa \\
                    --known-hosts portal_known_hosts --identity ~/.ssh/id_ed25519 -w my-study
                """)

        @Argument(help: "The export's manifest (X.manifest.json).") var manifest: String
        @Option(help: ArgumentHelp("Where to: sftp://USER@HOST[:PORT]/PATH.", valueName: "url")) var to: String
        @Option(help: ArgumentHelp("The pinned known-hosts file the server's key must be in.", valueName: "file")) var knownHosts: String
        @Option(help: ArgumentHelp("The private key to log in with (OpenSSH format; default: your ssh keys).", valueName: "key")) var identity: String?
        @Option(help: "Seconds to wait for the server to answer.") var connectTimeout = 15
        @Option(help: "How to report the result.") var format: ReportFormat = .table
        @OptionGroup var options: WorkspaceOptions

        func validate() throws {
            try format.refusingCSV("deliver")
            guard (1...600).contains(connectTimeout) else { throw ValidationError("--connect-timeout is seconds from 1 to 600") }
        }

        func run() throws {
            let destination = try SFTPDestination(parsing: to)
            let workspace = try options.open()
            let url = URL(fileURLWithPath: manifest)
            let bar = ProgressBar("delivering \(url.lastPathComponent)", unit: .bytes)
            let result: DeliveryResult
            do {
                defer { bar.finish() }
                result = try DeliveryService.deliver(
                    manifestURL: url, to: destination, knownHosts: knownHosts, identity: identity, connectTimeout: connectTimeout, workspace: workspace
                ) { sent, total in
                    if Console.showsProgress { bar.update(Int(sent), total: Int(total)) }
                }
            }
            if format == .json {
                try printJSON([
                    "destination": destination.description, "folder": result.remoteFolder, "host_key": result.hostKeyFingerprint,
                    "bytes": String(result.bytes), "bytes_sent": String(result.bytesSent), "resumed": result.resumed.joined(separator: ","),
                    "already_there": result.alreadyThere.joined(separator: ","),
                ])
                return
            }
            Console.print(
                "Delivered \(result.bytes) bytes (\(result.bytesSent) sent) to \(destination.host):\(result.remoteFolder) (host key \(result.hostKeyFingerprint))")
            if !result.resumed.isEmpty { Console.print("  resumed: \(result.resumed.joined(separator: ", "))") }
            if !result.alreadyThere.isEmpty { Console.print("  already there (same SHA-256): \(result.alreadyThere.joined(separator: ", "))") }
            Console.print("  read back and compared (SHA-256); recorded as export.delivered in the audit trail")
        }
    }
}
