import ArgumentParser
import CohortKit
import Foundation

/// `cohort data import --from apple-health`: one participant's Health app export.
enum AppleHealthImportCommand {
    static func run(file: String, participant: String?, study: String?, format: ReportFormat, workspace: Workspace) throws {
        guard let participant else {
            throw ValidationError("an Apple Health export belongs to one participant: pass --participant with their study code")
        }
        let bar = ProgressBar("importing \(URL(fileURLWithPath: file).lastPathComponent)", unit: "samples", total: nil)
        var progress: (@Sendable (Int) -> Void)?
        if Console.showsProgress { progress = { (n: Int) in bar.update(n) } }
        let importer = AppleHealthImporter(workspace: workspace, progress: progress)
        let summary: AppleHealthImportSummary
        do {
            summary = try importer.importExport(URL(fileURLWithPath: file), participantCode: participant, studyID: study)
        } catch {
            bar.finish()
            throw error
        }
        bar.finish()
        switch format {
        case .json: try printJSON(summary)
        default:
            let total = summary.total
            Console.print("\(file): \(total.seen) samples, \(total.imported) new, \(total.duplicates) already stored")
            Console.print(String(summary.renderTable().dropLast()))
        }
    }
}
