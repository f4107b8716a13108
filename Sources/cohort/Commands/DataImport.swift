import ArgumentParser
import CohortKit
import CohortCore
import Foundation
import CohortImport

extension Cohort.DataCommand {
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import records: cohort's CSV/NDJSON/JSON, Apple Health exports, FHIR R4, health_metrics; one file = one transaction.",
            discussion: """
                CSV header: participant,kind,start,end,value,unit,text,source,note (participant, kind and start required). NDJSON: one \
                object per line with the same keys; .json: an array of them. Instants are ISO 8601; without an offset they are read \
                in the participant's time zone. Units are UCUM and converted where sensible (e.g. [lb_av] → kg, [degF] → Cel).

                On the first bad row nothing from that file is stored and the error names file:line: field. With --rejects FILE, good \
                rows are kept and bad ones written to FILE with their reasons (a fixed rejects file imports as it is). Re-importing a \
                file is idempotent (same participant, kind, start and source = same record). On a terminal a progress bar shows \
                rows, rate and ETA on stderr (--quiet: none). --threads N validates rows on N threads besides the reader \
                (default: the cores less two — the reader's and the writer's — at least 1, which validates on the reading thread); one writer stores them in file order, so the result, the rejects file and the first error \
                are the same for any N.

                Outside sources, chosen with --from or recognized by content: an Apple Health export (export.zip, its folder or \
                export.xml; one participant, --participant; docs/import-apple-health.md), FHIR R4 NDJSON or Bundles (a file or a \
                folder; docs/import-fhir.md), and the app backend's health_metrics (a CSV dump, sync API bodies, or the table itself \
                over a postgresql:// URL; docs/import-health-metrics.md). Their summary lists what was seen, imported per type, \
                metric or kind, and skipped with reasons.

                Examples:
                  cohort data import symptoms.csv wearable.ndjson -w my-study
                  cohort data import --threads 1 wearable.ndjson -w my-study
                  cohort data import --study axspa-wearables export.csv \\
                    --rejects rejects.csv -w my-study
                  cohort data import export.zip --participant P-0007 -w my-study
                  cohort data import --from fhir bulk-export/ -w my-study
                  cohort data import --from fhir export/data/fhir --recipient lab-b \\
                    -w my-study
                  cohort data import --from health-metrics dump.csv \\
                    --user-map users.csv -w my-study
                  cohort data import --from postgresql://app@db/app --table health_metrics \\
                    --user-map users.csv -w my-study
                """)

        @Argument(help: "Data files (a folder for FHIR or an unpacked Apple Health export).") var files: [String] = []
        @Option(help: "The source: cohort, apple-health, fhir, health-metrics, or a postgresql:// URL (default: recognized by content).")
        var from: String?
        @Option(help: "With a postgresql:// source: the health_metrics table (table or schema.table).") var table: String?
        @Option(help: "CSV with the header user_id,participant: maps health_metrics users or FHIR patient identifiers to study codes.")
        var userMap: String?
        @Option(help: "FHIR exported by cohort: the export's recipient; its pseudonyms map back to study codes and its date shift is undone.")
        var recipient: String?
        @Option(help: "The participant's study code (an Apple Health export belongs to one participant).") var participant: String?
        @Option(help: "The study id the files belong to (checked against the workspace).") var study: String?
        @Option(help: "Keep good rows (records, FHIR resources, health_metrics rows) and write bad ones with their reasons to this CSV (mode 0600).")
        var rejects: String?
        @Option(help: "Threads that validate rows of cohort's CSV/NDJSON/JSON files (default: the cores less two, at least 1: the reading thread).")
        var threads: Int?
        @Option(help: "How to report the result.") var format: ReportFormat = .table
        @OptionGroup var options: WorkspaceOptions

        var isDatabase: Bool { from.map { $0.hasPrefix("postgresql://") || $0.hasPrefix("postgres://") } ?? false }

        func validate() throws {
            try format.refusingCSV("data import")
            if rejects != nil, files.count > 1 { throw ValidationError("--rejects takes one data file at a time") }
            if let threads, !(1...256).contains(threads) { throw ValidationError("--threads must be between 1 and 256") }
            if let from, !isDatabase, !["cohort", "apple-health", "fhir", "health-metrics"].contains(from) {
                throw ValidationError("--from takes cohort, apple-health, fhir, health-metrics or a postgresql:// URL")
            }
            if isDatabase {
                guard table != nil else { throw ValidationError("a postgresql:// source needs --table (e.g. --table health_metrics)") }
                guard files.isEmpty else { throw ValidationError("a postgresql:// source reads the table; give no files") }
            } else {
                if table != nil { throw ValidationError("--table applies to a postgresql:// source") }
                if files.isEmpty { throw ValidationError("give at least one data file") }
            }
        }

        /// The outside sources (FHIR, health_metrics) to import, or nil for cohort's own files and Apple Health.
        func externalSources() throws -> [ExternalSource]? {
            if isDatabase, let from, let table { return [.healthMetricsTable(url: from, table: table)] }
            if from == "cohort" || from == "apple-health" { return nil }
            if let from {
                return files.compactMap { ExternalSource.named(from, URL(fileURLWithPath: $0)) }
            }
            // An Apple Health folder or zip is read by the Apple Health path, not as FHIR.
            let sniffed = files.map { file -> ExternalSource? in
                let url = URL(fileURLWithPath: file)
                return ImportSource.sniff(url) == .appleHealth ? nil : ExternalSource.sniff(url)
            }
            if sniffed.allSatisfy({ $0 == nil }) { return nil }
            guard let sources = sniffed as? [ExternalSource] else {
                throw ValidationError("the files mix cohort record files and outside sources; import them separately or name the source with --from")
            }
            return sources
        }

        func run() throws {
            let workspace = try options.open()
            if let sources = try externalSources() {
                try runExternal(sources, workspace: workspace)
                return
            }
            if userMap != nil || recipient != nil { throw ValidationError("--user-map and --recipient apply to FHIR and health_metrics sources") }
            var results: [ImportFileResult] = []
            var appleHealthFiles = 0
            for file in files {
                let url = URL(fileURLWithPath: file)
                let source = from.flatMap(ImportSource.init(rawValue:)) ?? ImportSource.sniff(url)
                if source == .appleHealth {
                    // Nothing is refused row by row there (what is left out is counted), so a rejects file would stay empty.
                    if rejects != nil {
                        throw ValidationError("--rejects does not apply to an Apple Health export: its summary counts every sample left out, by reason")
                    }
                    try AppleHealthImportCommand.run(file: file, participant: participant, study: study, format: format, workspace: workspace)
                    appleHealthFiles += 1
                    continue
                }
                let showing = Console.showsProgress
                let bar = ProgressBar("importing \(url.lastPathComponent)", unit: "rows", total: showing ? RecordImporter.estimatedRows(in: url) : nil)
                var progress: (@Sendable (Int) -> Void)?
                if showing { progress = { (rows: Int) in bar.update(rows) } }
                let importer = RecordImporter(workspace: workspace, progress: progress, threads: threads ?? RecordImporter.defaultThreads)
                let result: ImportFileResult
                do {
                    result = try importer.importFile(url, rejectsURL: rejects.map { URL(fileURLWithPath: $0) }, studyID: study)
                } catch {
                    bar.finish()
                    if !results.isEmpty { Console.note("(\(results.count) earlier file(s) were imported; this file stored nothing)") }
                    throw error
                }
                bar.finish()
                results.append(result)
                if format == .table {
                    let rate = result.seconds > 0 ? Int(Double(result.rows) / result.seconds) : 0
                    Console.print(
                        "\(file): \(result.rows) rows, \(result.inserted) new, \(result.duplicates) already stored, \(result.rejected) rejected (\(rate) rows/s)")
                }
            }
            if format == .json, !results.isEmpty || appleHealthFiles == 0 { try printJSON(results) }
            if results.contains(where: { $0.rejected > 0 }), let rejects { Console.note("Rejected rows written to \(rejects)") }
        }

        func runExternal(_ sources: [ExternalSource], workspace: Workspace) throws {
            var results: [ExternalImportResult] = []
            for source in sources {
                let bar = ProgressBar("importing \(source.label)", unit: "records", total: nil)
                var progress: (@Sendable (Int) -> Void)?
                if Console.showsProgress { progress = { (n: Int) in bar.update(n) } }
                let importer = ExternalImporter(
                    workspace: workspace, userMap: userMap.map { URL(fileURLWithPath: $0) }, recipient: recipient, progress: progress,
                    rejects: rejects.map { URL(fileURLWithPath: $0) })
                let result: ExternalImportResult
                do {
                    result = try importer.run(source)
                } catch {
                    bar.finish()
                    if !results.isEmpty { Console.note("(\(results.count) earlier source(s) were imported; this one stored nothing)") }
                    throw error
                }
                bar.finish()
                results.append(result)
                if format == .table { Console.print(Self.summary(result, rejectsFile: rejects)) }
            }
            if format == .json { try printJSON(results) }
        }

        /// `skipped` with each element's unmapped codes on one line (`Observation: code not in the
        /// code map (12 codes)`): a hospital's export has dozens of codes no study maps, each its
        /// own reason in `--format json`.
        static func groupingCodes(_ skipped: [String: Int]) -> [String: Int] {
            let marker = ": code not in the code map"
            var grouped: [String: (items: Int, codes: Int)] = [:]
            var result: [String: Int] = [:]
            for (reason, n) in skipped {
                guard let range = reason.range(of: marker) else {
                    result[reason, default: 0] += n
                    continue
                }
                let head = String(reason[..<range.upperBound])
                grouped[head, default: (0, 0)].items += n
                grouped[head, default: (0, 0)].codes += 1
            }
            for (head, g) in grouped { result[head + (g.codes == 1 ? " (1 code)" : " (\(g.codes) codes)"), default: 0] += g.items }
            return result
        }

        /// How many reasons of each list (refused, skipped) the summary shows before pointing at `--format json`.
        static let reasonsShown = 5

        /// The summary a coordinator reads: what was imported per metric or kind, then the main
        /// reasons for what was refused or skipped, never values. It fits a screen: each list of
        /// reasons shows its `reasonsShown` largest, then how many more there are and where to see them.
        static func summary(_ r: ExternalImportResult, rejectsFile: String? = nil) -> String {
            let t = r.tally
            let unit = r.format == "fhir" ? "resources" : "rows"
            let imported = r.inserted + r.duplicates
            var lines = ["\(r.source) (\(r.format)): \(t.seen) \(unit) seen, \(imported) records imported (\(r.inserted) new, \(r.duplicates) already stored)"]
            if r.format == "fhir" { lines.append("  patients matched to the roster: \(t.patients)") }
            if !r.imported.isEmpty {
                let items = r.imported.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
                lines.append("  imported per \(r.format == "fhir" ? "kind" : "metric"): " + items.joined(separator: ", "))
            }
            if t.unmappedRows > 0 { lines.append("  not imported: \(t.unmappedRows) rows of \(t.unmappedUsers) users not in the user map") }
            for (reason, n) in r.outside.sorted(by: { $0.key < $1.key }) { lines.append("  not imported: \(n) records \(reason)") }
            var hidden = 0
            func top(_ counts: [String: Int], _ label: String) {
                let sorted = counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
                for (reason, n) in sorted.prefix(reasonsShown) { lines.append("  \(label): \(n) \(reason)") }
                hidden += max(0, sorted.count - reasonsShown)
            }
            if !r.rejected.isEmpty {
                let total = r.rejected.values.reduce(0, +)
                lines.append("  refused in all: \(total), each written with its reason to \(rejectsFile ?? "the rejects file")")
                top(r.rejected, "refused")
            }
            top(Self.groupingCodes(t.skipped), "skipped")
            if hidden > 0 { lines.append("  … and \(hidden) more reasons: --format json lists every reason with its count") }
            return lines.joined(separator: "\n")
        }
    }
}
