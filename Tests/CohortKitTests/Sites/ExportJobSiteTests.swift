import CohortCore
import CohortCrypto
import CohortDeid
import CohortKit
import CohortStore
import Foundation
import Testing
import CohortPackage

/// `cohort export --site`: only that site's participants and records, the scope stated in the
/// manifest, README and audit events, and a site never written per participant.
struct ExportJobSiteTests {
    /// Every file under `directory` with its text, by path relative to it.
    static func files(_ directory: URL) throws -> [String: String] {
        var result: [String: String] = [:]
        let base = directory.standardizedFileURL.path
        guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey]) else { return result }
        for case let url as URL in walker where (try url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
            result[String(url.standardizedFileURL.path.dropFirst(base.count + 1))] = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        }
        return result
    }

    /// The pseudonyms in `participants.csv`.
    static func pseudonyms(_ bag: URL) throws -> Set<String> {
        let text = try String(contentsOf: bag.appendingPathComponent("data/csv/participants.csv"), encoding: .utf8)
        let lines = text.split(whereSeparator: \.isNewline).map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let column = try #require(lines.first?.firstIndex(of: "pseudonym"))
        return Set(lines.dropFirst().map { $0[column] })
    }

    @Test func siteExportHoldsOnlyThatSitesParticipantsAndRecords() throws {
        let cohort = try SiteCohort()
        defer { cohort.cleanup() }
        let outcome = try cohort.export(site: SiteCohort.north, archive: false)
        let bag = try #require(outcome.bagDirectory)
        // Independent route: the recipient's pseudonyms of the participants enrolled at north, by construction.
        let pseudonymizer = Pseudonymizer(recipientKey: try cohort.workspace.keystore.recipientKey(for: "analyst"))
        let expected = Set(
            try cohort.workspace.store.participants().filter { SiteCohort.codes(at: SiteCohort.north).contains($0.participant.code) }
                .map { pseudonymizer.pseudonym(for: $0.participant.id) })
        #expect(expected.count == 10)
        #expect(try Self.pseudonyms(bag) == expected)
        #expect(outcome.participants == 10)
        #expect(outcome.records == 10 * SiteCohort.days)
        #expect(outcome.exclusions.isEmpty, "the other site's participants are out of scope, not excluded")
        let files = try Self.files(bag)
        let readme = try #require(files["data/README.txt"])
        #expect(readme.contains("Scope:            site \(SiteCohort.north) only"))
        // The site is stated once, in the README; no data file carries it.
        for (path, text) in files where path != "data/README.txt" {
            #expect(!text.contains(SiteCohort.north), "\(path) names the site")
            #expect(!text.contains(SiteCohort.south), "\(path) names the other site")
        }
        let events = try cohort.workspace.store.auditEvents()
        let begin = try #require(events.last { $0.action == "export.begin" })
        let create = try #require(events.last { $0.action == "export.create" })
        #expect(begin.details["site"] == SiteCohort.north)
        #expect(create.details["site"] == SiteCohort.north)
        #expect(create.details["participants"] == "10")
    }

    @Test func siteExportManifestStatesTheScope() throws {
        let cohort = try SiteCohort()
        defer { cohort.cleanup() }
        let outcome = try cohort.export(site: SiteCohort.south, archive: true)
        #expect(outcome.participants == 20)
        let manifestURL = try #require(outcome.manifestURL)
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: manifestURL)) as? [String: Any])
        #expect(manifest["site"] as? String == SiteCohort.south)
        let verification = try VerifyService.verify(
            archive: try #require(outcome.archive?.url), manifest: nil, publicKey: cohort.workspace.keystore.publicKey, workspace: cohort.workspace)
        #expect(verification.passed, "a site export verifies like any other")
    }

    @Test func studyWideExportNamesNoSite() throws {
        let cohort = try SiteCohort()
        defer { cohort.cleanup() }
        let outcome = try cohort.export(site: nil, archive: false)
        #expect(outcome.participants == SiteCohort.count)
        let bag = try #require(outcome.bagDirectory)
        let files = try Self.files(bag)
        let readme = try #require(files["data/README.txt"])
        #expect(readme.contains("Scope:            the whole study (every site)"))
        for (path, text) in files {
            #expect(!text.contains(SiteCohort.north) && !text.contains(SiteCohort.south), "\(path) names a site")
        }
        let create = try #require(try cohort.workspace.store.auditEvents().last { $0.action == "export.create" })
        #expect(create.details["site"] == nil)
    }

    @Test func unknownOrMalformedSiteExportsNothing() throws {
        let cohort = try SiteCohort()
        defer { cohort.cleanup() }
        let before = try cohort.workspace.store.auditEvents().count
        #expect(throws: CohortError.self) { try cohort.export(site: "west-zz3", archive: false) }
        do {
            _ = try cohort.export(site: "West Site", archive: false)
            Issue.record("a malformed site name was accepted")
        } catch let error as CohortError {
            #expect(error.code == .invalidInput)
            #expect(error.location?.field == "site")
        }
        // Both are refused before export.begin: nothing is audited.
        #expect(try cohort.workspace.store.auditEvents().count == before)
    }
}
