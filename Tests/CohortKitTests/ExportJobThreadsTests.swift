import CohortCore
import CohortCrypto
import CohortKit
import Foundation
import Testing
import CohortDeid
import CohortPackage

/// The export's records are read and de-identified on worker threads (`ExportOptions.threads`)
/// and written in participant order: the archive — every table, FHIR file and the
/// de-identification report with its counts — is byte-for-byte the one a single thread makes,
/// whatever the thread count, also when the embargo leaves records out.
struct ExportJobThreadsTests {
    @Test(arguments: [TimeZoneCohort.exportedAt, TimeZoneCohort.now])
    func theArchiveIsTheSameWhateverTheThreadCount(createdAt: Date) throws {
        let cohort = try TimeZoneCohort(participants: 31)
        defer { cohort.cleanup() }
        var digests: [Int: String] = [:]
        var outcomes: [Int: ExportOutcome] = [:]
        for threads in [1, 2, 3, 8] {
            var options = ExportOptions(
                recipient: "analyst", formats: [.csv, .json, .fhir], outDirectory: cohort.directory.appendingPathComponent("out-\(threads)"),
                createdAt: createdAt)
            options.threads = threads
            let outcome = try ExportJob(workspace: cohort.workspace, options: options).run()
            digests[threads] = try #require(outcome.archive?.sha256)
            outcomes[threads] = outcome
        }
        let single = try #require(outcomes[1])
        #expect(single.records > 0 && single.participants > 0)
        if createdAt == TimeZoneCohort.now {
            #expect(single.report.dateShift.leftOutAfterCreation["records", default: 0] > 0, "the embargo leaves records out of this export")
        }
        for threads in [2, 3, 8] {
            #expect(digests[threads] == digests[1], "\(threads) threads: the same archive as one")
            #expect(outcomes[threads]?.report == single.report, "\(threads) threads: the same report and counts as one")
            #expect(outcomes[threads]?.records == single.records)
        }
    }

    /// The workers hand records over in chunks: with chunks of 1 and 7 records (boundaries
    /// inside every participant's ~110) the archive is still the one a single thread makes.
    @Test func chunkBoundariesInsideParticipantsChangeNothing() throws {
        let cohort = try TimeZoneCohort(participants: 9)
        defer { cohort.cleanup() }
        var digests: [String] = []
        for (threads, chunk) in [(1, 512), (2, 1), (3, 7), (2, 512)] {
            var options = ExportOptions(
                recipient: "analyst", formats: [.csv, .json, .fhir], outDirectory: cohort.directory.appendingPathComponent("out-\(threads)-\(chunk)"),
                createdAt: TimeZoneCohort.now)
            options.threads = threads
            options.recordChunkSize = chunk
            digests.append(try #require(try ExportJob(workspace: cohort.workspace, options: options).run().archive?.sha256))
        }
        #expect(Set(digests).count == 1, "every thread count and chunk size gives the one-thread archive")
    }
}

/// The payload is deflated while it is written (`DeflateSpool`) and the archive copies it: every
/// non-empty table and FHIR file and the compliance report come from the spool, nothing outside
/// `data/` does, and the archive verifies (its tar is the files on disk).
struct ExportJobDeflateSpoolTests {
    @Test func tablesAndFHIRFilesAreDeflatedAsTheyAreWritten() throws {
        let cohort = try TimeZoneCohort(participants: 7)
        defer { cohort.cleanup() }
        let options = ExportOptions(
            recipient: "analyst", formats: [.csv, .json, .fhir], outDirectory: cohort.directory.appendingPathComponent("out"),
            createdAt: TimeZoneCohort.exportedAt)
        let outcome = try ExportJob(workspace: cohort.workspace, options: options).run()
        let written = outcome.files.filter { file in
            file.size > 0
                && (file.path.hasPrefix("data/csv/") || file.path.hasPrefix("data/json/") || file.path.hasPrefix("data/fhir/")
                    || file.path == "data/reports/compliance.json")
        }.map(\.path)
        #expect(written.count > 10)
        #expect(outcome.deflatedWhileWritten == written.sorted())
        #expect(outcome.deflatedWhileWritten.allSatisfy { $0.hasPrefix("data/") })
        let archive = try #require(outcome.archive)
        let report = try VerifyService.verify(archive: archive.url, manifest: nil, publicKey: cohort.workspace.keystore.publicKey, workspace: nil)
        #expect(report.passed, "\(report.checks.filter { !$0.passed })")
    }
}

/// The residual scan is made on the files as they are written (`WrittenFileScan`): every file it
/// covers in an export is scanned from its writes, and what it reports is what a scan of the
/// published bag read back from disk gives (the independent route).
struct ExportJobWrittenScanTests {
    @Test func everyScannedFileIsScannedAsWrittenAndMatchesAReadBack() throws {
        let cohort = try TimeZoneCohort(participants: 7)
        defer { cohort.cleanup() }
        let out = cohort.directory.appendingPathComponent("out")
        let options = ExportOptions(
            recipient: "analyst", formats: [.csv, .json, .fhir], outDirectory: out, createdAt: TimeZoneCohort.exportedAt, archive: false)
        let outcome = try ExportJob(workspace: cohort.workspace, options: options).run()
        let data = out.appendingPathComponent(outcome.bagName).appendingPathComponent("data")
        let read = try cohort.workspace.residualScanner().scan(directory: data)
        let reported = try #require(outcome.report.residualScan)
        #expect(read.filesScanned > 10)
        #expect(outcome.scannedWhileWritten == read.filesScanned)
        #expect(reported.filesScanned == read.filesScanned)
        #expect(reported.valuesScanned == read.valuesScanned)
        #expect(reported.freeTextValues == read.freeTextValues)
        #expect(reported.findings == read.findings)
    }
}
