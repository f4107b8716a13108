import ArgumentParser
import CohortKit
import CohortPackage
import Foundation

extension Cohort {
    /// `cohort report`: the coordinator's HTML study report.
    struct ReportCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "report",
            abstract: "Write the study report: one self-contained HTML file (no network, no script, prints well).",
            discussion: """
                Study summary, enrollment over time, consent versions and re-consents, withdrawals by mode, compliance per rule \
                (participant × day heatmap and weekly trend against the threshold), the participants below threshold as of \
                --as-of, and with --export an archive's contents, de-identification, k and quasi-identifiers, suppressions, \
                residual scan and signature status (checked by the verifier, as `cohort verify -w` does). Participants are shown \
                by study code only. Exit 1 when the --export archive fails verification (the report is still written).

                Examples:
                  cohort report -w my-study --out report.html
                  cohort report -w my-study --out report.html --as-of 2026-11-01 \\
                    --export exports/X.tar.gz
                  cohort report -w my-study --out site-a.html --site site-a
                """)

        @Option(help: "The HTML file to write (replaced atomically).") var out: String
        @Option(help: ArgumentHelp("Compliance as of this date (YYYY-MM-DD) or ISO 8601 instant; default now.", valueName: "date")) var asOf: DateOrInstant?
        @Option(help: "An export archive (.tar.gz) to describe and verify.") var export: String?
        @Option(help: "The export's manifest (default: next to the archive).") var manifest: String?
        @Option(help: "Report on this site's participants only (default: the whole study).") var site: String?
        @OptionGroup var options: WorkspaceOptions

        func run() throws {
            let workspace = try options.open(readOnly: true)
            let bar = ProgressBar("verifying \(export.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "")", unit: .bytes)
            var progress: (@Sendable (UInt64, UInt64) -> Void)?
            if export != nil, Console.showsProgress { progress = { read, total in bar.update(Int(read), total: Int(total)) } }
            let report: StudyReport
            do {
                defer { bar.finish() }
                report = try StudyReportService(workspace: workspace).report(
                    asOf: asOf?.date ?? workspace.now(), archive: export.map { URL(fileURLWithPath: $0) },
                    manifest: manifest.map { URL(fileURLWithPath: $0) }, site: site, progress: progress)
            }
            let url = URL(fileURLWithPath: out)
            try ReportFile.write(report.html(), to: url)
            Console.print("Wrote \(url.path)")
            if report.exportVerified == false {
                Console.note("the export did not verify: see its section in the report, or run `cohort verify`")
                throw ExitCode(1)
            }
        }
    }
}

extension Cohort.Verify {
    /// `verify --html FILE`: the auditor's page for `report`, written atomically.
    func writeHTML(_ report: VerificationReport, to path: String, workspace: Workspace?) throws {
        let keyPath = publicKey ?? workspace?.signingPublicKeyPath
        let page = VerificationPage(
            report: report, archive: URL(fileURLWithPath: archive), manifest: manifest.map { URL(fileURLWithPath: $0) }, publicKeyPath: keyPath,
            generatedAt: Date())
        try ReportFile.write(page.html(), to: URL(fileURLWithPath: path))
        Console.note("Wrote the verification report to \(path)")
    }
}
