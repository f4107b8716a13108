import CohortCore
import CohortCrypto
@testable import CohortKit
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

/// The payload files the archive takes from the spool, the digests describe and the residual
/// scan covers as written get no copy in the staging folder: the archive, its manifest and the
/// report are byte for byte those of an export that stages every file, the archive verifies
/// (digests and row counts recomputed from it), and the report's residual scan is that of the
/// published files read back from the archive (the independent route).
struct ExportJobWithoutStagedCopyTests {
    @Test(arguments: [1, 2]) func theArchiveIsTheOneAStagedBagGives(threads: Int) throws {
        let cohort = try TimeZoneCohort(participants: 7)
        defer { cohort.cleanup() }
        var outcomes: [Bool: ExportOutcome] = [:]
        for staged in [false, true] {
            var options = ExportOptions(
                recipient: "analyst", formats: [.csv, .json, .fhir], outDirectory: cohort.directory.appendingPathComponent("out-\(staged)"),
                createdAt: TimeZoneCohort.exportedAt)
            options.threads = threads
            options.stagesEveryPayloadFile = staged
            outcomes[staged] = try ExportJob(workspace: cohort.workspace, options: options).run()
        }
        let alone = try #require(outcomes[false])
        let staged = try #require(outcomes[true])
        #expect(staged.writtenWithoutStagedCopy.isEmpty)
        // Every file the scan covered as written had no staged copy: the tables, the FHIR files.
        #expect(alone.writtenWithoutStagedCopy.count == alone.scannedWhileWritten)
        #expect(alone.writtenWithoutStagedCopy.count > 10)
        #expect(alone.writtenWithoutStagedCopy.allSatisfy { $0.hasPrefix("data/csv/") || $0.hasPrefix("data/json/") || $0.hasPrefix("data/fhir/") })
        #expect(alone.archive?.sha256 == staged.archive?.sha256, "the same archive, byte for byte")
        #expect(alone.files == staged.files)
        #expect(alone.report == staged.report)
        let archive = try #require(alone.archive)
        let report = try VerifyService.verify(archive: archive.url, manifest: nil, publicKey: cohort.workspace.keystore.publicKey, workspace: nil)
        #expect(report.passed, "\(report.checks.filter { !$0.passed })")
        // The report's residual scan is that of the published files, read back from the archive.
        let unpacked = cohort.directory.appendingPathComponent("unpacked-\(threads)")
        _ = try ArchiveMembers.extract(archive: archive.url, into: unpacked) { $0.hasPrefix("data/") }
        let read = try cohort.workspace.residualScanner().scan(directory: unpacked.appendingPathComponent("data"))
        let reported = try #require(alone.report.residualScan)
        #expect(read.filesScanned == reported.filesScanned && read.filesScanned == alone.writtenWithoutStagedCopy.count)
        #expect(read.valuesScanned == reported.valuesScanned)
        #expect(read.freeTextValues == reported.freeTextValues)
        #expect(read.findings == reported.findings)
    }

    /// A file one of the taps did not keep whole has no other copy: the export stops.
    @Test func aFileATapDidNotKeepStopsTheExport() throws {
        let all: Set<String> = ["data/csv/a.csv", "data/json/a.ndjson"]
        try ExportJob.checkTapOnlyFiles(written: all, deflated: all, described: all, scanned: all)
        try ExportJob.checkTapOnlyFiles(written: [], deflated: [], described: [], scanned: [])
        let short: Set<String> = ["data/csv/a.csv"]
        for (deflated, described, scanned) in [(short, all, all), (all, short, all), (all, all, short), (all.union(["data/x.csv"]), all, all)] {
            let refused = #expect(throws: CohortError.self) {
                try ExportJob.checkTapOnlyFiles(written: all, deflated: deflated, described: described, scanned: scanned)
            }
            #expect(refused?.code == .system)
        }
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
