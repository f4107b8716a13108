import ArgumentParser
import CohortCore
import CohortCrypto
import CohortDeid
import CohortKit
import CohortPackage
import Foundation
import CohortStore

extension Cohort {
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Export de-identified data (CSV, JSON, FHIR R4) as a signed, reproducible archive.",
            discussion: """
                Streams records through the protocol's de-identification policy into the writers, scans the
                result for residual identifiers (any hit publishes nothing), builds a BagIt bag, archives it
                (tar + gzip), and writes <name>.manifest.json with its Ed25519 signature <name>.manifest.json.sig.
                Participants withdrawn in exclude/erase mode are left out and counted. The audit trail records
                export.begin before anything is read and export.create (the archive's SHA-256) before any file
                gets its final name; a participant who withdraws (exclude/erase) while the export runs makes it
                publish nothing and name them. Names are unique in --out (a taken one gets -2, -3…); with
                --created-at the name is fixed and a taken one is refused.

                Examples:
                  cohort export --recipient "Analytics Team" --out exports -w my-study
                  cohort export --recipient lab-b --formats csv,fhir --no-archive --out exports -w my-study
                  cohort export --recipient lab-b --created-at 2026-11-01T00:00:00Z --out exports -w my-study   # reproducible
                """)

        @Option(help: "The study id (checked against the workspace).") var study: String?
        @Option(help: "Who receives the export; pseudonyms and date shifts are specific to it.") var recipient: String
        @Option(help: "Comma-separated formats: csv, json, fhir (default: the protocol's).") var formats: String?
        @Option(help: "Output folder.") var out: String = "exports"
        @Option(help: "Creation instant (ISO 8601) — the same store, keys, recipient and instant give a byte-identical archive.") var createdAt: String?
        @Flag(help: "Leave the bag directory instead of the archive.") var noArchive = false
        @Option(help: "fast, default or best (zlib levels 1, 6, 9).") var compression: ExportCompression = .default
        @Option(help: "table or json.") var format: OutputFormat = .table
        @Option(
            help: ArgumentHelp(
                "Reviewed exceptions to the residual-PII scan: a CSV (table,column,value_sha256,reviewer,reason) or YAML list.",
                discussion: "Build it from `cohort deid scan DIR --format csv`; each exception used is recorded in the audit trail and the signed manifest.",
                valueName: "file")) var allow: String?
        @OptionGroup var options: WorkspaceOptions

        func run() throws {
            let workspace = try options.open()
            let exceptions = try allow.map { try ResidualExceptionList.load(URL(fileURLWithPath: $0)) } ?? ResidualExceptionList([])
            if let study, study != (try workspace.currentProtocol().studyProtocol.id) {
                throw CohortError(.notFound, "this workspace does not hold study '\(study)'", hint: "pass the study's workspace with -w")
            }
            var formatSet: Set<ExportFormat>?
            if let formats {
                formatSet = []
                for name in formats.split(separator: ",") {
                    guard let f = ExportFormat(rawValue: name.trimmingCharacters(in: .whitespaces)) else {
                        throw CohortError.invalid("unknown format '\(name)'", field: "formats", hint: "csv, json, fhir")
                    }
                    formatSet?.insert(f)
                }
            }
            var created: Date?
            if let createdAt {
                guard let t = Timestamp.parse(createdAt, defaultTimeZone: nil) else {
                    throw CohortError.invalid("expected an ISO 8601 instant with offset", field: "created-at")
                }
                created = t.date
            }
            let level = compression.level
            var progress: (@Sendable (Int, Int) -> Void)?
            if Console.stderrIsTerminal {
                progress = { (done: Int, total: Int) in
                    FileHandle.standardError.write(Data("\rexporting: \(done)/\(total) participants…".utf8))
                }
            }
            var exportOptions = ExportOptions(
                recipient: recipient, formats: formatSet, outDirectory: URL(fileURLWithPath: out), createdAt: created, archive: !noArchive, compressionLevel: level)
            exportOptions.exceptions = exceptions
            let outcome = try ExportJob(workspace: workspace, options: exportOptions, progress: progress).run()
            Console.endProgress()
            if format == .json {
                let summary: [String: String] = [
                    "bag": outcome.bagName, "archive": outcome.archive?.url.path ?? "", "archive_sha256": outcome.archive?.sha256 ?? "",
                    "manifest": outcome.manifestURL?.path ?? "", "signature": outcome.signatureURL?.path ?? "", "bag_directory": outcome.bagDirectory?.path ?? "",
                    "participants": String(outcome.participants), "records": String(outcome.records),
                ]
                Console.print(String(decoding: try JSONEncoder.pretty.encode(summary), as: UTF8.self))
                return
            }
            Console.print("Exported \(outcome.participants) participants and \(outcome.records) records for \(recipient)"
                + (outcome.exclusions.isEmpty ? "" : " (left out: " + outcome.exclusions.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ") + ")"))
            if let archive = outcome.archive, let manifest = outcome.manifestURL, let sig = outcome.signatureURL {
                Console.print("  archive    \(archive.url.path)  (\(archive.size) bytes, sha256 \(archive.sha256))")
                Console.print("  manifest   \(manifest.path)")
                Console.print("  signature  \(sig.path)")
                Console.print("  k-anonymity \(outcome.report.kAnonymity.map { "k = \($0.achievedK.map(String.init) ?? "n/a") (requested \($0.requestedK))" } ?? "not requested"); residual PII scan: \(Self.scanSummary(outcome.report))")
                Console.print("Verify: cohort verify \(archive.url.path) -w \(options.directory.path)")
            } else if let bag = outcome.bagDirectory {
                Console.print("  bag        \(bag.path)")
            }
        }

        /// `clean`, or how many findings reviewed exceptions covered.
        static func scanSummary(_ report: DeidentificationReport) -> String {
            let covered = report.residualScan?.findingsCount ?? 0
            return covered == 0 ? "clean" : "\(covered) finding(s) covered by reviewed exceptions (recorded in the manifest)"
        }
    }

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify an export archive: signature, digests, gzip/tar, BagIt, row counts, audit checkpoint.",
            discussion: """
                One line per check; exit 0 only when every check passes. With --workspace, also scans the
                bag for every roster identifier, checks that the manifest's audit checkpoint is in the
                workspace's (intact) audit chain, and that an export.create event of that chain names the
                archive's SHA-256 (an archive the trail does not name fails).

                Examples:
                  cohort verify exports/axspa-wearables-20261120T120000Z.tar.gz --public-key signing.pub.pem
                  cohort verify exports/….tar.gz --workspace my-study --format json
                """)

        @Argument(help: "The .tar.gz archive.") var archive: String
        @Option(help: "The study's public key (PEM). Default: the workspace's.") var publicKey: String?
        @Option(help: "The manifest (default: next to the archive).") var manifest: String?
        @Option(name: [.customShort("w"), .customLong("workspace")], help: "A workspace: adds the residual-PII scan and the audit-chain check.") var workspace: String?
        @Option(help: "table or json.") var format: OutputFormat = .table

        func run() throws {
            let ws = try workspace.map { try Workspace.open(at: URL(fileURLWithPath: $0), actor: "verifier", options: .init(readOnly: true)) }
            let key: Ed25519PublicKey
            if let publicKey {
                key = try PublicKeyFile.load(publicKey)
            } else if let ws {
                key = ws.keystore.publicKey
            } else {
                throw ValidationError("give --public-key signing.pub.pem (or --workspace DIR)")
            }
            let progress = Console.stderrIsTerminal
            if progress { Console.note("verifying \(archive)…") }
            let report = try VerifyService.verify(
                archive: URL(fileURLWithPath: archive), manifest: manifest.map { URL(fileURLWithPath: $0) }, publicKey: key, workspace: ws)
            if format == .json {
                Console.print(String(decoding: try JSONEncoder.pretty.encode(report), as: UTF8.self))
            } else {
                Console.print(report.text)
            }
            if !report.passed { throw ExitCode(1) }
        }
    }

    struct Deid: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "De-identification tools: residual-PII scan, before/after preview, re-identification risk.",
            subcommands: [Scan.self, Preview.self, Risk.self])

        struct Scan: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Scan files or folders for any roster participant's identifiers (reports file:line:field:kind, never the value).",
                discussion: """
                    Scans the participant values (CSV data cells, JSON string values); in folders, cohort's own
                    fixed-text files (codebook, datapackage.json, README.txt, reports…) are skipped. Exit 1 when
                    anything is found. --format json and --format csv add each value's SHA-256: the csv output is
                    an exceptions file for `cohort export --allow` once a reviewer fills in reviewer and reason.

                    Examples:
                      cohort deid scan exports/bag/data -w my-study
                      cohort deid scan notes.csv --format json -w my-study
                      cohort deid scan exports/bag --format csv -w my-study > exceptions.csv
                    """)

            @Argument(help: "Files or folders.") var paths: [String]
            @Option(help: "table or json.") var format: OutputFormat = .table
            @OptionGroup var options: WorkspaceOptions

            func run() throws {
                let workspace = try options.open()
                let scanner = ResidualScanner(roster: try workspace.store.participants(withIdentities: true).map(\.participant))
                var findings: [ResidualFinding] = []
                var skipped: [String] = []
                var files = 0
                for path in paths {
                    var isDirectory: ObjCBool = false
                    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                        throw CohortError(.notFound, "no such file or folder", at: .init(file: path))
                    }
                    if isDirectory.boolValue {
                        let result = try scanner.scan(directory: URL(fileURLWithPath: path))
                        findings += result.findings
                        skipped += result.filesSkipped
                        files += result.filesScanned
                    } else {
                        findings += try scanner.scan(files: [URL(fileURLWithPath: path)])
                        files += 1
                    }
                }
                switch format {
                case .json:
                    Console.print(String(decoding: try JSONEncoder.pretty.encode(ResidualScanResult(filesScanned: files, filesSkipped: skipped, findings: findings)), as: UTF8.self))
                case .csv:
                    // One row per distinct (table, column, value): the exceptions file a reviewer completes.
                    var seen: Set<[String]> = []
                    var rows: [[String]] = []
                    for f in findings {
                        let row = [f.table, f.field ?? "", f.valueSHA256, "", ""]
                        if seen.insert(row).inserted { rows.append(row) }
                    }
                    Console.print(TableRenderer.csv(["table", "column", "value_sha256", "reviewer", "reason"], rows))
                case .table:
                    for f in findings { Console.print(f.description) }
                    Console.print(findings.isEmpty ? "✔ no identifiers found in \(files) file(s)" : "✘ \(findings.count) finding(s) in \(files) file(s)")
                }
                if !findings.isEmpty { throw ExitCode(1) }
            }
        }

        struct Preview: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Show a coordinator before/after for a sample of one participant's records.",
                discussion: "Example:\n  cohort deid preview --participant P-0001 --recipient lab-b -w my-study")

            @Option(help: "Study code.") var participant: String
            @Option(help: "Recipient (pseudonyms and shifts depend on it).") var recipient: String = "preview"
            @Option(help: "How many records to show.") var sample: Int = 5
            @Option(help: "table or json.") var format: OutputFormat = .table
            @OptionGroup var options: WorkspaceOptions

            func run() throws {
                let workspace = try options.open()
                let rows = try DeidPreviewService.preview(workspace: workspace, code: participant, recipient: recipient, sample: sample)
                switch format {
                case .json: Console.print(String(decoding: try JSONEncoder.pretty.encode(rows), as: UTF8.self))
                case .csv: Console.print(TableRenderer.csv(["field", "before", "after"], rows.map { [$0.field, $0.before ?? "", $0.after ?? "(dropped)"] }))
                case .table: Console.print(TableRenderer.table(["field", "before", "after"], rows.map { [$0.field, $0.before ?? "", $0.after ?? "(dropped)"] }))
                }
            }
        }
    }
}
