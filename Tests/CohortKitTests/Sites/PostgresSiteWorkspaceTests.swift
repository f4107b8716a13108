import CohortCore
import CohortCrypto
import CohortDeid
@testable import CohortKit
import CohortPostgres
import CohortStore
import CohortStorePostgres
import CohortTestSupport
import Foundation
import Testing

/// The site cohort on PostgreSQL through CohortKit: the owner enrolls both sites, and each
/// coordinator's workspace (its own role, the study's shared keys) lists and exports only its
/// site, while every role verifies the whole audit chain.
@Suite(.serialized)
struct PostgresSiteWorkspaceTests {
    static var hasPostgres: Bool {
        if ProcessInfo.processInfo.environment["CI"] != nil { return true }
        return ScratchCluster.unavailableReason() == nil
    }

    @Test(
        .enabled(if: hasPostgres, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func aSiteCoordinatorListsAndExportsOnlyTheirSite() throws {
        let cluster = try ScratchCluster()
        defer { cluster.stop() }
        let admin = try PostgresConnection(url: cluster.url())
        for role in ["study_owner LOGIN CREATEROLE", "coord_a LOGIN", "coord_b LOGIN", "monitor LOGIN"] { try admin.query("CREATE ROLE \(role)") }
        try admin.query("CREATE DATABASE study OWNER study_owner")
        func url(_ role: String) -> String { cluster.url(database: "study").replacingOccurrences(of: "postgresql://postgres@", with: "postgresql://\(role)@") }

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pgsites-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        // The keys of one study, shared by every coordinator's workspace.
        let keys = try Workspace.create(at: directory.appendingPathComponent("keys"), actor: "owner", now: { SiteCohort.now }).keystore
        func workspace(_ role: String, create: Bool = false) throws -> Workspace {
            let folder = directory.appendingPathComponent(role)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let store = try PostgresStudyStore(url: url(role), piiKey: keys.piiKey, create: create)
            return Workspace(directory: folder, store: store, keystore: keys, actor: role, now: { SiteCohort.now })
        }
        let owner = try workspace("study_owner", create: true)
        _ = try owner.pin(try ProtocolLoader.load(contentsOf: SiteCohort.protocolURL))
        _ = try SiteCohort(workspace: owner, directory: directory)
        for site in [SiteCohort.north, SiteCohort.south] {
            try PostgresSiteRoles.apply(try PostgresSiteRoles.addSiteStatements(site: site), url: url("study_owner"))
        }
        for (site, role) in [(SiteCohort.north, "coord_a"), (SiteCohort.south, "coord_b")] {
            try PostgresSiteRoles.apply(try PostgresSiteRoles.grantStatements(site: site, login: role), url: url("study_owner"))
        }
        try PostgresSiteRoles.apply(try PostgresSiteRoles.grantStatements(site: nil, login: "monitor"), url: url("study_owner"))

        let coordA = try workspace("coord_a")
        let listed = try ParticipantListing(workspace: coordA).rows(withIdentities: true)
        #expect(Set(listed.map(\.code)) == SiteCohort.codes(at: SiteCohort.north))
        #expect(listed.allSatisfy { $0.identity != nil }, "the site's identities decrypt with the shared pii.key")
        // Its study-wide export holds site A only: the pseudonyms of north's participants, by construction.
        let outcome = try ExportJob(
            workspace: coordA,
            options: ExportOptions(
                recipient: "analyst", formats: [.csv], outDirectory: directory.appendingPathComponent("out"), createdAt: SiteCohort.now, archive: false)
        ).run()
        let pseudonymizer = Pseudonymizer(recipientKey: try keys.recipientKey(for: "analyst"))
        let expected = Set(
            try owner.store.participants().filter { $0.participant.site == SiteCohort.north }.map { pseudonymizer.pseudonym(for: $0.participant.id) })
        let bag = try #require(outcome.bagDirectory)
        #expect(try ExportJobSiteTests.pseudonyms(bag) == expected)
        #expect(outcome.records == 10 * SiteCohort.days)
        #expect(try workspace("coord_b").store.participants().count == 20)
        #expect(try workspace("monitor").store.participants().count == SiteCohort.count)
        // Everyone verifies the whole chain, including the events of the other site.
        for role in ["study_owner", "coord_a", "coord_b", "monitor"] {
            let verification = try workspace(role).store.verifyAudit(publicKey: keys.publicKey)
            #expect(verification.isIntact, "\(role): \(verification.firstProblem ?? "")")
            #expect(verification.events == (try owner.store.auditEvents().count))
        }
    }
}
