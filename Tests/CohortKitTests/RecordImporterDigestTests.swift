import CohortCore
import Foundation
import Synchronization
import Testing

@testable import CohortKit

/// The import hashes its file on a thread beside the rows (the batch row records the SHA-256).
/// Whatever way the import ends, that thread has ended first: a `cohort data import` refused at
/// its header once exited while the thread still ran and crashed in OpenSSL's exit-time cleanup
/// (signal 11 instead of exit code 3, seen in CI under load).
struct RecordImporterDigestTests {
    @Test(arguments: [1, 3])
    func noHashingThreadOutlivesARefusedImport(threads: Int) throws {
        let cohort = try TimeZoneCohort(participants: 1)
        defer { cohort.cleanup() }
        // A header refused at once, and enough rows behind it that hashing takes far longer.
        let row = "P-0001,pain,2026-03-01T08:30:00,,4,,,,\n"
        let url = cohort.directory.appendingPathComponent("refused-\(threads).csv")
        try Data(("participant,kind,start,valeu\n" + String(repeating: row, count: 1_500_000)).utf8).write(to: url)
        var importer = RecordImporter(workspace: cohort.workspace)
        importer.threads = threads
        #expect(throws: CohortError.self) { try importer.importFile(url) }
        let stillHashing = BackgroundDigest.hashing.withLock { $0[url.path] }
        #expect(stillHashing == nil, "the file's hashing thread was still running after the import returned")
    }
}
