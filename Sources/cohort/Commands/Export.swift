import ArgumentParser
import CohortCrypto
import CohortKit
import CohortCore
import CohortPackage
import Foundation
import CohortStore

extension Cohort {
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Export de-identified data (CSV, JSON, FHIR R4) as a signed, reproducible archive.",
            discussion: """
                Streams records through the protocol's de-identification policy into the writers, scans the result for residual \
                identifiers (any hit publishes nothing), builds a BagIt bag, archives it (tar + gzip), and writes \
                <name>.manifest.json with its Ed25519 signature <name>.manifest.json.sig. Participants withdrawn in exclude/erase \
                mode are left out and counted.

                Consent governs what is published: a participant is included only with a consent in force whose version the \
                protocol accepts and whose sharing scope allows the export's --audience (external, the default: an outside \
                recipient; study-team: the study's own investigators and staff). With the default scopes, broad allows both, \
                study-only the study team alone, no-sharing neither. Records of a data type the governing consent version does not \
                cover are left out. Everything left out is counted by reason (never named) here, in the manifest and in the \
                de-identification report; --dry-run prints those counts and writes nothing. The audit trail records export.begin before anything is read and export.create (the \
                archive's SHA-256) before any file gets its final name; a participant who withdraws (exclude/erase) while the export \
                runs makes it publish nothing and name them. Names are unique in --out (a taken one gets -2, -3…); with --created-at \
                the name is fixed and a taken one is refused.

                --encrypt-to CERT.pem (repeatable, one per recipient key) publishes the archive as X.tar.gz.p7m, CMS encrypted to \
                each certificate through the system OpenSSL (AuthEnvelopedData with AES-256-GCM; --cipher aes-256-cbc for \
                EnvelopedData; RSA keys with RSA-OAEP, EC keys with ECDH), and leaves no plaintext .tar.gz unless --keep-plaintext. \
                The manifest stays readable and names both files' SHA-256 and the certificates' fingerprints. A certificate that is \
                expired, not yet valid, or whose key usage excludes encryption is refused before anything is written (exit 6); \
                --ca FILE also verifies its chain. Without --recipient, the first certificate's subject (common name) is the recipient. \
                The recipient opens it with stock OpenSSL: openssl cms -decrypt -in X.tar.gz.p7m -inform DER -inkey key.pem \
                -recip cert.pem -out X.tar.gz.

                --outputs names the files written (csv, json, fhir); --format is how this command reports what it did (table or json). \
                On a terminal a progress bar shows participants, rate and ETA on stderr (--quiet: none). --threads N (default: \
                every core the process may use: taskset and cgroup limits count) reads and de-identifies participants on N threads; the writers keep participant order, so the archive \
                is the same for any N.

                Examples:
                  cohort export --recipient "Analytics Team" --out exports -w my-study
                  cohort export --recipient "Outside Lab" --dry-run -w my-study  # counts only
                  cohort export --recipient "Study statisticians" --audience study-team \\
                    --out exports -w my-study
                  cohort export --recipient lab-b --outputs csv,fhir --no-archive \\
                    --out exports -w my-study
                  cohort export --recipient lab-b --created-at 2026-11-01T00:00:00Z \\
                    --out exports -w my-study   # reproducible
                  cohort export --recipient site-a-analysts --site site-a \\
                    --out exports -w my-study   # one site only
                  cohort export --encrypt-to lab-cert.pem --out exports -w my-study
                  cohort export --recipient lab-b --threads 1 --out exports -w my-study
                """)

        @Option(help: "The study id (checked against the workspace).") var study: String?
        @Option(help: "Who receives the export; pseudonyms are specific to it (default with --encrypt-to: the certificate's subject).")
        var recipient: String?
        @Option(help: ArgumentHelp("Who the recipient is: external (default) or study-team; participants' sharing scopes must allow it.", valueName: "audience"))
        var audience: ExportAudience = .external
        @Flag(help: "Count what the export would include and leave out, by reason, and write nothing.") var dryRun = false
        @Option(help: ArgumentHelp("Comma-separated files to write: csv, json, fhir (default: the protocol's).", valueName: "csv,json,fhir"))
        var outputs: ExportFormatList?
        @Option(name: .customLong("formats"), help: .hidden) var deprecatedFormats: ExportFormatList?
        @Option(help: "Output folder.") var out: String = "exports"
        @Option(help: "Export only the participants of this site (default: the whole study); the manifest and README state the scope.")
        var site: String?
        @Option(help: ArgumentHelp("Creation instant (ISO 8601 with offset) — the same store, keys, recipient and instant give a byte-identical archive.", valueName: "instant"))
        var createdAt: Instant?
        @Flag(help: "Leave the bag directory instead of the archive.") var noArchive = false
        @Option(help: "fast, default or best (zlib levels 1, 6, 9).") var compression: ExportCompression = .default
        @Option(help: "Threads that read and de-identify participants (default: every core the process may use); the archive is the same for any count.")
        var threads: Int?
        @Option(help: "How to report the result.") var format: ReportFormat = .table
        @Option(help: "FHIR shapes: bulk (NDJSON, default), bundles (one collection Bundle per participant) or both.") var fhir: FHIRLayout = .bulk
        @Flag(help: "Also write one FHIR transaction Bundle per participant (bundles/<pseudonym>.transaction.json) to POST to a FHIR server.")
        var fhirTransaction = false
        @Option(
            help: ArgumentHelp(
                "Reviewed exceptions to the residual-PII scan: a CSV (table,column,value_sha256,reviewer,reason) or YAML list.",
                discussion: "Build it from `cohort deid scan DIR --format csv`; each exception used is recorded in the audit trail and the signed manifest.",
                valueName: "file")) var allow: String?
        @Option(help: ArgumentHelp("Encrypt the archive to this recipient certificate (PEM; repeatable).", valueName: "cert.pem"))
        var encryptTo: [String] = []
        @Option(help: ArgumentHelp("Also verify each --encrypt-to certificate's chain against these CA certificates (PEM).", valueName: "file"))
        var ca: String?
        @Option(help: "Content cipher with --encrypt-to: aes-256-gcm (AuthEnvelopedData, default) or aes-256-cbc (EnvelopedData).")
        var cipher: CMSEnvelope.ContentCipher = .aes256GCM
        @Flag(help: "With --encrypt-to, also keep the plaintext .tar.gz in --out.") var keepPlaintext = false
        @OptionGroup var options: WorkspaceOptions

        func validate() throws {
            try format.refusingCSV("export (for the files it writes, use --outputs csv)")
            if recipient == nil, encryptTo.isEmpty { throw ValidationError("give --recipient NAME (or --encrypt-to CERT.pem, whose subject names the recipient)") }
            if encryptTo.isEmpty, keepPlaintext || ca != nil { throw ValidationError("--keep-plaintext and --ca go with --encrypt-to CERT.pem") }
            if !encryptTo.isEmpty, noArchive { throw ValidationError("--encrypt-to encrypts the archive; it cannot go with --no-archive") }
            if let threads, !(1...256).contains(threads) { throw ValidationError("--threads must be between 1 and 256") }
            if outputs != nil, deprecatedFormats != nil { throw ValidationError("give --outputs only (--formats is its old name)") }
        }

        func run() throws {
            let workspace = try options.open()
            if let study, study != (try workspace.currentProtocol().studyProtocol.id) {
                throw CohortError(.notFound, "this workspace does not hold study '\(study)'", hint: "pass the study's workspace with -w")
            }
            var certificates: [RecipientCertificate] = []
            for path in encryptTo {
                let certificate = try RecipientCertificate(path: path)
                try certificate.check(at: Date(), caFile: ca)
                certificates.append(certificate)
            }
            let recipient = try recipient ?? Self.recipientName(from: certificates[0])
            var exportOptions = ExportOptions(
                recipient: recipient, formats: (outputs ?? deprecatedFormats)?.formats, outDirectory: URL(fileURLWithPath: out),
                createdAt: createdAt?.timestamp.date, archive: !noArchive, compressionLevel: compression.level)
            if let allow { try exportOptions.loadExceptions(from: URL(fileURLWithPath: allow)) }
            exportOptions.fhirLayout = fhir
            exportOptions.fhirTransactions = fhirTransaction
            exportOptions.site = site
            exportOptions.audience = audience
            if let threads { exportOptions.threads = threads }
            if !certificates.isEmpty {
                exportOptions.encryption = ExportEncryption(recipients: certificates, cipher: cipher, keepPlaintext: keepPlaintext)
            }
            if dryRun {
                try printDryRun(try ExportJob(workspace: workspace, options: exportOptions).dryRun(), recipient: recipient)
                return
            }
            let bar = ProgressBar("exporting", unit: "participants")
            var progress: (@Sendable (Int, Int) -> Void)?
            if Console.showsProgress { progress = { (done: Int, total: Int) in bar.update(done, total: total) } }
            let outcome: ExportOutcome
            do {
                outcome = try ExportJob(workspace: workspace, options: exportOptions, progress: progress).run()
            } catch {
                bar.finish()
                throw error
            }
            bar.finish()
            if format == .json {
                try printJSON([
                    "bag": outcome.bagName, "archive": outcome.archive?.url.path ?? "", "archive_sha256": outcome.archive?.sha256 ?? "",
                    "encrypted": outcome.encryptedURL?.path ?? "", "encrypted_sha256": outcome.archive?.encrypted?.sha256 ?? "",
                    "manifest": outcome.manifestURL?.path ?? "", "signature": outcome.signatureURL?.path ?? "", "bag_directory": outcome.bagDirectory?.path ?? "",
                    "participants": String(outcome.participants), "records": String(outcome.records), "audience": audience.rawValue,
                    "threads": String(exportOptions.threads),
                    "left_out": Self.counts(outcome.exclusions), "records_left_out": Self.counts(outcome.recordExclusions),
                ])
                return
            }
            Console.print("Exported \(outcome.participants) participants and \(outcome.records) records for \(recipient) (\(audience.rawValue))" + (site.map { " (site \($0) only)" } ?? "")
                + (outcome.exclusions.isEmpty ? "" : " (left out: " + Self.counts(outcome.exclusions) + ")"))
            if !outcome.recordExclusions.isEmpty { Console.print("  records left out by consent: " + Self.counts(outcome.recordExclusions)) }
            if let archive = outcome.archive, let manifest = outcome.manifestURL, let sig = outcome.signatureURL {
                if let encrypted = archive.encrypted, let url = outcome.encryptedURL {
                    let names = encrypted.recipients.map(\.subject).joined(separator: ", ")
                    Console.print("  encrypted  \(url.path)  (\(encrypted.size) bytes, sha256 \(encrypted.sha256); \(encrypted.cipher) to \(names))")
                    Console.print("  archive    " + (keepPlaintext ? archive.url.path + "  " : "not kept ") + "(plaintext \(archive.size) bytes, sha256 \(archive.sha256))")
                } else {
                    Console.print("  archive    \(archive.url.path)  (\(archive.size) bytes, sha256 \(archive.sha256))")
                }
                Console.print("  manifest   \(manifest.path)")
                Console.print("  signature  \(sig.path)")
                Console.print("  k-anonymity \(outcome.kAnonymitySummary); residual PII scan: \(outcome.residualScanSummary)")
                if let url = outcome.encryptedURL {
                    Console.print("Deliver: cohort deliver \(ShellQuote.quote(manifest.path)) --to sftp://USER@HOST/PATH --known-hosts FILE -w \(ShellQuote.quote(options.directory.path))")
                    Console.print("Verify (recipient): cohort verify \(ShellQuote.quote(url.path)) --decrypt-key KEY.pem --recipient-cert CERT.pem --public-key signing.pub.pem")
                } else {
                    Console.print("Verify: cohort verify \(ShellQuote.quote(archive.url.path)) -w \(ShellQuote.quote(options.directory.path))")
                }
            } else if let bag = outcome.bagDirectory {
                Console.print("  bag        \(bag.path)")
            }
        }

        /// A certificate subject as a recipient name: the characters a recipient may hold, or a
        /// clear request for --recipient.
        static func recipientName(from certificate: RecipientCertificate) throws -> String {
            let name = certificate.subjectName
            let allowed = name.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) || " ._-".unicodeScalars.contains($0) }
            guard !name.isEmpty, name.count <= 64, allowed else {
                throw CohortError(
                    .invalidInput, "the certificate's subject cannot be used as a recipient name", at: .init(file: certificate.path),
                    hint: "name the recipient with --recipient (letters, digits, space, . _ -; at most 64)")
            }
            return name
        }

        /// `2 no consent, 1 sharing scope`: counts by reason, in reason order.
        static func counts(_ counts: [String: Int]) -> String {
            counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        }

        func printDryRun(_ dry: ExportDryRun, recipient exportRecipient: String) throws {
            if format == .json {
                try printJSON([
                    "dry_run": "true", "audience": dry.audience.rawValue, "participants": String(dry.participants), "records": String(dry.records),
                    "left_out": Self.counts(dry.exclusions), "records_left_out": Self.counts(dry.recordExclusions),
                ])
                return
            }
            Console.print(
                "Dry run: an export for \(exportRecipient) (\(dry.audience.rawValue)) would include \(dry.participants) participants and \(dry.records) records"
                    + (site.map { " (site \($0) only)" } ?? ""))
            Console.print("  participants left out: " + (dry.exclusions.isEmpty ? "none" : Self.counts(dry.exclusions)))
            Console.print("  records left out by consent: " + (dry.recordExclusions.isEmpty ? "none" : Self.counts(dry.recordExclusions)))
            Console.print("Nothing was written.")
        }
    }
}
