import CohortCore
import CohortCrypto
@testable import CohortKit
import CohortPackage
import Foundation
import Testing

/// `cohort verify` extracts only the files its extra checks read (``ExtraVerificationCheck/reads``).
struct VerifyExtractionTests {
    /// The consent check on the tables verify extracts for it says what it says on the whole bag
    /// extracted another way (``ArchiveMembers/extract(archive:into:wanted:)``, every file): the
    /// same participants and the same number of records, in each tabular rendering (CSV and
    /// NDJSON, or NDJSON only).
    @Test(arguments: [[ExportFormat.csv, .json, .fhir], [.json, .fhir]])
    func theConsentCheckOnTheTablesItReadsIsTheOneOnTheWholeBag(formats: [ExportFormat]) throws {
        let cohort = try TimeZoneCohort(participants: 7)
        defer { cohort.cleanup() }
        let options = ExportOptions(
            recipient: "analyst", formats: Set(formats), outDirectory: cohort.directory.appendingPathComponent("out"),
            createdAt: TimeZoneCohort.exportedAt)
        let archive = try #require(try ExportJob(workspace: cohort.workspace, options: options).run().archive)
        let report = try VerifyService.verify(archive: archive.url, manifest: nil, publicKey: cohort.workspace.keystore.publicKey, workspace: nil)
        #expect(report.passed, "\(report.checks.filter { !$0.passed })")
        let consent = try #require(report.check(named: ConsentCheck.name))

        let whole = cohort.directory.appendingPathComponent("whole")
        let extracted = try ArchiveMembers.extract(archive: archive.url, into: whole) { _ in true }
        #expect(extracted.contains { $0.hasPrefix("data/fhir/") })
        let manifestURL = ManifestSigner.manifestURL(forArchive: archive.url)
        let manifest = try JSONDecoder().decode(ExportManifest.self, from: Data(contentsOf: manifestURL))
        let direct = ConsentCheck.run(bag: whole, manifest: manifest)
        #expect(direct.passed, "\(direct.detail)")
        #expect(consent.detail == direct.detail)
        let judged = consent.detail.split(separator: ";").last.map(String.init) ?? ""
        if formats.contains(.csv) {
            // Both renderings judged, the same records in each.
            let counts = judged.split(separator: " ").compactMap { Int($0) }
            #expect(counts.count == 2 && counts[0] == counts[1] && counts[0] > 0, "\(consent.detail)")
            #expect(judged.contains(" records of data/csv/ and \(counts.first ?? 0) of data/json/ each covered"), "\(consent.detail)")
        } else {
            #expect(judged.contains(" records of data/json/ each covered"), "\(consent.detail)")
        }
        // What verify extracted for it: each rendering's folder, every table of it.
        let reads = ConsentCheck.reads(manifest)
        let tables = extracted.filter { reads.includes($0) }
        let folders = formats.contains(.csv) ? ["data/csv/", "data/json/"] : ["data/json/"]
        #expect(!tables.isEmpty && tables.allSatisfy { path in folders.contains { path.hasPrefix($0) } })
        #expect(tables.count == extracted.filter { path in folders.contains { path.hasPrefix($0) } }.count)

        // A record table the signed manifest lists but the folder lacks: not checked, not "no records".
        let table = try #require(tables.first { !$0.contains("/consents.") && !$0.contains("/participants.") && !$0.contains("/codebook.") && !$0.hasSuffix(".json") })
        try FileManager.default.removeItem(at: whole.appendingPathComponent(table))
        let without = ConsentCheck.run(bag: whole, manifest: manifest)
        #expect(!without.passed && without.detail.hasPrefix("not checked: 1 file(s) the signed manifest lists"), "\(without.detail)")
    }
}
