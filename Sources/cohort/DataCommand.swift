import ArgumentParser
import CohortCore
import CohortKit
import Foundation

extension Cohort {
    struct DataCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "data",
            abstract: "Import study records.",
            subcommands: [Import.self])

        struct Import: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Import record files (CSV, NDJSON, JSON); one file = one transaction.",
                discussion: """
                    CSV header: participant,kind,start,end,value,unit,text,source,note (participant, kind and
                    start required). NDJSON: one object per line with the same keys; .json: an array of them.
                    Instants are ISO 8601; without an offset they are read in the participant's time zone.
                    Units are UCUM and converted where sensible (e.g. [lb_av] → kg, [degF] → Cel).

                    On the first bad row nothing from that file is stored and the error names file:line: field.
                    With --rejects FILE, good rows are kept and bad ones written to FILE with their reasons.
                    Re-importing a file is idempotent (same participant, kind, start and source = same record).

                    Examples:
                      cohort data import symptoms.csv wearable.ndjson -w my-study
                      cohort data import --study axspa-wearables export.csv --rejects rejects.csv -w my-study
                    """)

            @Argument(help: "Data files.") var files: [String]
            @Option(help: "The study id the files belong to (checked against the workspace).") var study: String?
            @Option(help: "Keep good rows and write bad rows (with reasons) to this CSV.") var rejects: String?
            @Option(help: "table or json.") var format: OutputFormat = .table
            @Option(help: "cohort or apple-health (default: sniffed from the file).") var from: String?
            @Option(help: "The participant's study code (Apple Health exports belong to one participant).") var participant: String?
            @OptionGroup var options: WorkspaceOptions

            func validate() throws {
                if rejects != nil, files.count > 1 { throw ValidationError("--rejects takes one data file at a time") }
                if let from, ImportSource(rawValue: from) == nil {
                    throw ValidationError("--from must be one of: \(ImportSource.allCases.map(\.rawValue).joined(separator: ", "))")
                }
            }

            func run() throws {
                let workspace = try options.open()
                var results: [ImportFileResult] = []
                var appleHealthFiles = 0
                for file in files {
                    let source = from.flatMap(ImportSource.init(rawValue:)) ?? ImportSource.sniff(URL(fileURLWithPath: file))
                    if source == .appleHealth {
                        try AppleHealthImportCommand.run(file: file, participant: participant, study: study, format: format, workspace: workspace)
                        appleHealthFiles += 1
                        continue
                    }
                    let importer = RecordImporter(workspace: workspace, progress: Console.progress("importing \(URL(fileURLWithPath: file).lastPathComponent)"))
                    let result: ImportFileResult
                    do {
                        result = try importer.importFile(URL(fileURLWithPath: file), rejectsURL: rejects.map { URL(fileURLWithPath: $0) }, studyID: study)
                    } catch {
                        Console.endProgress()
                        if !results.isEmpty { Console.note("(\(results.count) earlier file(s) were imported; this file stored nothing)") }
                        throw error
                    }
                    Console.endProgress()
                    results.append(result)
                    if format == .table {
                        let rate = result.seconds > 0 ? Int(Double(result.rows) / result.seconds) : 0
                        Console.print(
                            "\(file): \(result.rows) rows, \(result.inserted) new, \(result.duplicates) already stored, \(result.rejected) rejected (\(rate) rows/s)")
                    }
                }
                if format == .json, !results.isEmpty || appleHealthFiles == 0 { Console.print(String(decoding: try JSONEncoder.pretty.encode(results), as: UTF8.self)) }
                if results.contains(where: { $0.rejected > 0 }), let rejects { Console.note("Rejected rows written to \(rejects)") }
            }
        }
    }
}
