import Foundation
import Testing

/// End to end: the export's scrubber is built on a thread of its own while the k-anonymity pass
/// runs (issue 28, seventeenth round), so a missing word list is found after the pass, not before
/// it. It still stops the export, and a dry run, with the error that names the package, before
/// anything is written.
extension ExportCLITests {
    @Test func aMissingWordListStopsTheExportBeforeAnythingIsPublished() throws {
        let cli = try demo()
        let empty = cli.path("no-dictionaries")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let missing = ["COHORT_DICTIONARY_DIR": empty]
        let out = cli.path("out")
        let r = try cli.run(["export", "--recipient", "Lab A", "--out", out, "-w", cli.workspace], environment: missing)
        #expect(r.status != 0, "\(r.output)")
        #expect(r.stderr.contains("word list") && r.stderr.contains("wamerican-large"), "\(r.stderr)")
        #expect(finalNamed(in: out).isEmpty, "nothing is published: \(finalNamed(in: out))")
        let dry = try cli.run(["export", "--recipient", "Lab A", "--dry-run", "-w", cli.workspace], environment: missing)
        #expect(dry.status != 0, "\(dry.output)")
        #expect(dry.stderr.contains("wamerican-large"), "\(dry.stderr)")
        // With the word lists the same export publishes (the failed one left nothing behind it).
        let published = try exported(cli, out: "out")
        #expect(try verify(cli, published).status == 0)
    }
}
