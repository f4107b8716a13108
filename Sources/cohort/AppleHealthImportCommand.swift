import ArgumentParser
import CohortKit
import Foundation

/// `cohort data import --from apple-health`: one participant's Health app export.
enum AppleHealthImportCommand {
    static func run(file: String, participant: String?, study: String?, format: OutputFormat, workspace: Workspace) throws {
        guard let participant else {
            throw ValidationError("an Apple Health export belongs to one participant: pass --participant with their study code")
        }
        let importer = AppleHealthImporter(workspace: workspace, progress: Console.progress("importing \(URL(fileURLWithPath: file).lastPathComponent)"))
        let summary: AppleHealthImportSummary
        do {
            summary = try importer.importExport(URL(fileURLWithPath: file), participantCode: participant, studyID: study)
        } catch {
            Console.endProgress()
            throw error
        }
        Console.endProgress()
        switch format {
        case .json: Console.print(String(decoding: try JSONEncoder.pretty.encode(summary), as: UTF8.self))
        default:
            let total = summary.total
            Console.print("\(file): \(total.seen) samples, \(total.imported) new, \(total.duplicates) already stored")
            Console.print(String(summary.renderTable().dropLast()))
        }
    }
}
