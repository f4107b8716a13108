import ArgumentParser
import CohortCrypto
import CohortKit
import CohortCore
import CohortPackage
import Foundation

extension Cohort {
    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify an export archive: signature, digests, gzip/tar, BagIt, row counts, audit checkpoint.",
            discussion: """
                One line per check; exit 0 only when every check passes, 1 when one fails, 4 when the archive (or --manifest) does \
                not exist. With --workspace, also scans the bag for every roster identifier, checks that the manifest's audit \
                checkpoint is in the workspace's (intact) audit chain, and that an export.create event of that chain names the \
                archive's SHA-256 (an archive the trail does not name fails). On a terminal a progress bar shows the archive \
                bytes read, MB/s and ETA on stderr (--quiet: none).

                An encrypted export (X.tar.gz.p7m, from export --encrypt-to) is verified by its recipient with --decrypt-key and \
                --recipient-cert: the .p7m's SHA-256 and size against the signed manifest, the certificate among the manifest's \
                recipients, decryption into a private temporary folder (removed afterwards), then every check above on the \
                plaintext archive.

                Examples:
                  cohort verify exports/axspa-wearables-20261120T120000Z.tar.gz \\
                    --public-key my-study/keys/signing.pub.pem
                  cohort verify exports/axspa-wearables-20261120T120000Z.tar.gz \\
                    --workspace my-study --format json
                  cohort verify exports/axspa-wearables-20261120T120000Z.tar.gz.p7m \\
                    --decrypt-key lab-key.pem --recipient-cert lab-cert.pem \\
                    --public-key signing.pub.pem
                """)

        @Argument(help: "The .tar.gz archive, or the encrypted .tar.gz.p7m.") var archive: String
        @Option(help: "The study's public key (PEM). Default: the workspace's keys/signing.pub.pem.") var publicKey: String?
        @Option(help: "The manifest (default: next to the archive).") var manifest: String?
        @Option(name: [.customShort("w"), .customLong("workspace")], help: "A workspace: adds the residual-PII scan and the audit-chain check.") var workspace: String?
        @Option(help: "How to report the result.") var format: ReportFormat = .table
        @Option(help: "Also write the auditor's verification report (HTML) to this file.") var html: String?
        @Option(help: ArgumentHelp("With an encrypted .p7m: the recipient's private key (PEM).", valueName: "key.pem")) var decryptKey: String?
        @Option(help: ArgumentHelp("With an encrypted .p7m: the recipient's certificate (PEM).", valueName: "cert.pem")) var recipientCert: String?
        @OptionGroup var output: OutputOptions

        func validate() throws {
            try format.refusingCSV("verify")
            if (decryptKey == nil) != (recipientCert == nil) { throw ValidationError("give --decrypt-key and --recipient-cert together") }
            if archive.hasSuffix(".p7m"), decryptKey == nil {
                throw ValidationError("an encrypted export is verified by its recipient: give --decrypt-key KEY.pem --recipient-cert CERT.pem")
            }
            if publicKey == nil, workspace == nil { throw ValidationError("give --public-key signing.pub.pem (or --workspace DIR)") }
        }

        func run() throws {
            let ws = try workspace.map { try Workspace.openForVerification(at: URL(fileURLWithPath: $0)) }
            let url = URL(fileURLWithPath: archive)
            let bar = ProgressBar("verifying \(url.lastPathComponent)", unit: .bytes)
            var progress: (@Sendable (UInt64, UInt64) -> Void)?
            if Console.showsProgress { progress = { read, total in bar.update(Int(read), total: Int(total)) } }
            let report: VerificationReport
            do {
                defer { bar.finish() }
                if let decryptKey, let recipientCert {
                    guard let key = FileManager.default.contents(atPath: decryptKey) else {
                        throw CohortError(.notFound, "decryption key not found", at: .init(file: decryptKey), hint: "give the recipient's private key (PEM)")
                    }
                    report = try VerifyService.verifyEncrypted(
                        url, manifest: manifest.map { URL(fileURLWithPath: $0) }, publicKeyFile: publicKey.map { URL(fileURLWithPath: $0) },
                        workspace: ws, decryptKeyPEM: [UInt8](key), recipientCertificate: try RecipientCertificate(path: recipientCert), progress: progress)
                } else {
                    report = try VerifyService.verify(
                        archive: url, manifest: manifest.map { URL(fileURLWithPath: $0) },
                        publicKeyFile: publicKey.map { URL(fileURLWithPath: $0) }, workspace: ws, progress: progress)
                }
            }
            if let html { try writeHTML(report, to: html, workspace: ws) }
            if format == .json { try printJSON(report) } else { Console.print(report.text) }
            if !report.passed { throw ExitCode(1) }
        }
    }
}
