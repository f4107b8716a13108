import CohortCore
import CohortCrypto
import CohortKit
import CohortStore
import Foundation
import Testing
import CohortCompliance

/// Sites at enrollment: validated, stored, audited, and filtering the roster, compliance and the report.
struct RosterSiteTests {
    @Test func enrollmentStoresAndAuditsTheSite() throws {
        let cohort = try SiteCohort()
        defer { cohort.cleanup() }
        let stored = try cohort.workspace.store.participants()
        for (i, p) in stored.enumerated() { #expect(p.participant.site == SiteCohort.site(i), "participant \(i)") }
        let enrolls = try cohort.workspace.store.auditEvents().filter { $0.action == "participant.enroll" }
        #expect(enrolls.count == SiteCohort.count)
        let siteByID = Dictionary(uniqueKeysWithValues: stored.map { ($0.participant.id.uuidString.lowercased(), $0.participant.site) })
        for event in enrolls { #expect(event.details["site"] == siteByID[event.subject ?? ""] ?? nil) }
        #expect(try cohort.workspace.store.verifyAudit(publicKey: cohort.workspace.keystore.publicKey).isIntact)
    }

    @Test(arguments: ["Site-A", "site a", "site/a", String(repeating: "a", count: 65), "sité"])
    func malformedSiteIsRefusedWithFileLineAndField(site: String) throws {
        let cohort = try SiteCohort()
        defer { cohort.cleanup() }
        let url = cohort.directory.appendingPathComponent("roster.csv")
        let row = "P-0100,Ann Qxow,,,,,,,,Europe/Berlin,2026-02-01,,\(site)"
        try Data("\(RosterEntry.csvHeader.joined(separator: ",")),site\nP-0099,Bo Qxow,,,,,,,,Europe/Berlin,2026-02-01,,north-zz1\n\(row)\n".utf8).write(to: url)
        do {
            _ = try Roster(workspace: cohort.workspace).importCSV(url)
            Issue.record("a malformed site was accepted")
        } catch let error as CohortError {
            #expect(error.code == .invalidInput)
            #expect(error.location?.line == 3)
            #expect(error.location?.field == "site")
            #expect(!error.description.contains(site), "the error repeats the value")
        }
        #expect(try cohort.workspace.store.participants().count == SiteCohort.count, "nothing was enrolled")
    }

    @Test func rosterWithoutSiteColumnEnrollsWithoutSite() throws {
        let cohort = try SiteCohort()
        defer { cohort.cleanup() }
        let url = cohort.directory.appendingPathComponent("roster.csv")
        try Data("code,name,time_zone,enrolled_on\nP-0200,Cy Qxow,Europe/Berlin,2026-02-01\n".utf8).write(to: url)
        _ = try Roster(workspace: cohort.workspace).importCSV(url)
        #expect(try cohort.workspace.store.participant(code: "P-0200")?.participant.site == nil)
        let event = try #require(try cohort.workspace.store.auditEvents().last { $0.action == "participant.enroll" })
        #expect(event.details["site"] == nil)
    }

    @Test func listingComplianceAndReportCoverOneSite() throws {
        let cohort = try SiteCohort()
        defer { cohort.cleanup() }
        let listing = ParticipantListing(workspace: cohort.workspace)
        let north = try listing.rows(withIdentities: false, site: SiteCohort.north)
        #expect(Set(north.map(\.code)) == SiteCohort.codes(at: SiteCohort.north))
        #expect(north.allSatisfy { $0.site == SiteCohort.north })
        #expect(try listing.rows(withIdentities: false).count == SiteCohort.count, "study-wide is the default")
        do {
            _ = try listing.rows(withIdentities: false, site: "west-zz3")
            Issue.record("an unknown site listed nothing silently")
        } catch let error as CohortError {
            #expect(error.code == .notFound)
            #expect(error.hint?.contains(SiteCohort.north) == true && error.hint?.contains(SiteCohort.south) == true)
        }
        let compliance = try ComplianceService(workspace: cohort.workspace).report(asOf: SiteCohort.now, site: SiteCohort.south)
        #expect(Set(compliance.participants.compactMap(\.code)) == SiteCohort.codes(at: SiteCohort.south))
        let report = try StudyReportService(workspace: cohort.workspace).report(asOf: SiteCohort.now, site: SiteCohort.north)
        let html = report.html()
        #expect(html.contains("site \(SiteCohort.north) only"))
        // Independent route: the records of north's participants, counted one by one in the store.
        let northRecords = try cohort.workspace.store.participants().filter { $0.participant.site == SiteCohort.north }
            .reduce(0) { $0 + (try cohort.workspace.store.recordCount($1.handle)) }
        #expect(northRecords == 10 * SiteCohort.days)
        #expect(html.contains("<li id=\"total-records\"><span class=\"figure\">\(northRecords)</span>"), "the report counts north's records")
        #expect(html.contains("<li id=\"total-enrolled\"><span class=\"figure\">10</span>"))
    }
}
