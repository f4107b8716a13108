import ArgumentParser
import CohortKit
import Foundation

extension Cohort.DataCommand {
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import record files (CSV, NDJSON, JSON); one file = one transaction.",
            discussion: """
                CSV header: participant,kind,start,end,value,unit,text,source,note (participant, kind and start required). NDJSON: one \
                object per line with the same keys; .json: an array of them. Instants are ISO 8601; without an offset they are read \
                in the participant's time zone. Units are UCUM and converted where sensible (e.g. [lb_av] → kg, [degF] → Cel).

                On the first bad row nothing from that file is stored and the error names file:line: field. With --rejects FILE, good \
                rows are kept and bad ones written to FILE with their reasons. Re-importing a file is idempotent (same participant, \
                kind, start and source = same record). On a terminal a progress bar shows rows, rate and ETA on stderr (--quiet: none).

                Examples:
                  cohort data import symptoms.csv wearable.ndjson -w my-study
                  cohort data import --study axspa-wearables export.csv --rejects rejects.csv -w my-study
                """)

        @Argument(help: "Data files.") var files: [String]
        @Option(help: "The study id the files belong to (checked against the workspace).") var study: String?
        @Option(help: "Keep good rows and write bad rows (with reasons) to this CSV.") var rejects: String?
        @Option(help: "table or json (no csv).") var format: OutputFormat = .table
        @OptionGroup var options: WorkspaceOptions

        func validate() throws {
            try format.refusingCSV("data import")
            if rejects != nil, files.count > 1 { throw ValidationError("--rejects takes one data file at a time") }
        }

        func run() throws {
            let workspace = try options.open()
            var results: [ImportFileResult] = []
            for file in files {
                let url = URL(fileURLWithPath: file)
                let showing = Console.showsProgress
                let bar = ProgressBar("importing \(url.lastPathComponent)", unit: "rows", total: showing ? RecordImporter.estimatedRows(in: url) : nil)
                var progress: (@Sendable (Int) -> Void)?
                if showing { progress = { (rows: Int) in bar.update(rows) } }
                let importer = RecordImporter(workspace: workspace, progress: progress)
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
            if format == .json { try printJSON(results) }
            if results.contains(where: { $0.rejected > 0 }), let rejects { Console.note("Rejected rows written to \(rejects)") }
        }
    }
}
