import CohortTestSupport
import Foundation
import Testing

/// docs/multi-site.md's two-site walkthrough, run as written: its ```sh blocks are read from the
/// page and run in order in one bash (-euo pipefail) in an empty folder, with the built `cohort`
/// first on PATH and PGHOST/PGPORT/PGUSER naming a throwaway PostgreSQL cluster (its superuser
/// plays the DBA). Then what the page says the walkthrough shows is checked on its output.
@Suite(.serialized) struct MultiSiteWalkthroughCLITests {
    static var enabled: Bool { ProcessInfo.processInfo.environment["CI"] != nil || ScratchCluster.unavailableReason() == nil }

    /// The ```sh blocks between `## Two-site walkthrough` and the next `## ` heading.
    static func blocks() throws -> [String] {
        let text = try String(contentsOf: CLI.repoRoot.appendingPathComponent("docs/multi-site.md"), encoding: .utf8)
        guard let start = text.range(of: "\n## Two-site walkthrough\n") else { return [] }
        let rest = text[start.upperBound...]
        let section = rest[..<(rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex)]
        return WalkthroughCLITests.shBlocks(section)
    }

    @Test(.enabled(if: enabled, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func theTwoSiteWalkthroughRunsAsWritten() throws {
        let blocks = try Self.blocks()
        #expect(blocks.count == 4)
        let script = blocks.joined(separator: "\n")
        for command in [
            "cohort init", "cohort site add", "cohort site grant", "cohort site invite", "cohort site join", "cohort participant enroll",
            "cohort consent record", "cohort data import", "cohort export --site", "cohort verify", "cohort audit verify",
        ] {
            #expect(script.contains(command), "the walkthrough shows \(command)")
        }
        let cluster = try ScratchCluster()
        defer { cluster.stop() }
        let cli = try CLI()
        defer { cli.cleanup() }
        // The folder is the coordinators' and the owner's; the cluster's superuser (PGUSER) is the DBA.
        let script0 = "export PGHOST=\(cluster.directory.path) PGPORT=\(cluster.port) PGUSER=\(cluster.user)\n" + script
        let r = try WalkthroughCLITests.bash(script0, in: cli.directory)
        let lastCommand = r.stderr.split(separator: "\n").last { $0.hasPrefix("+ cohort") } ?? ""
        try #require(r.status == 0, "the walkthrough stopped (exit \(r.status)) at: \(lastCommand)\n\(r.stderr.suffix(3000))\n\(r.stdout.suffix(2000))")

        #expect(r.stdout.contains("Joined site site-a as database role alice") && r.stdout.contains("Joined site site-b as database role bob"), "\(r.stdout)")
        // Alice's listing: her site's participants only; the owner's: both sites'.
        let environment = "export PGHOST=\(cluster.directory.path) PGPORT=\(cluster.port)\n"
        let alice = try WalkthroughCLITests.bash(environment + "cohort participant list --format csv -w alice-ws", in: cli.directory)
        let codes = Set(alice.stdout.split(whereSeparator: \.isNewline).dropFirst().compactMap { $0.split(separator: ",").first.map(String.init) })
        #expect(codes == ["A-0001", "A-0002"], "\(alice.output)")
        let owner = try WalkthroughCLITests.bash(environment + "cohort participant list --format csv -w study", in: cli.directory)
        #expect(owner.stdout.split(whereSeparator: \.isNewline).count == 5, "\(owner.output)")
        // Each export verifies from every workspace: 2 archives × 3 workspaces, each naming its site's registered key.
        for site in ["site-a", "site-b"] {
            let allowed = r.stdout.components(separatedBy: "site \(site)'s key (registered at event").count - 1
            #expect(allowed == 3, "\(site): \(allowed)")
        }
        #expect(r.stdout.components(separatedBy: "audit chain intact").count - 1 == 3, "\(r.stdout.suffix(1500))")
        for (site, folder) in [("site-a", "exports-a"), ("site-b", "exports-b")] {
            let manifest = try #require(try FileManager.default.contentsOfDirectory(atPath: cli.path(folder)).first { $0.hasSuffix(".manifest.json") })
            let json = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: cli.path(folder) + "/" + manifest))) as? [String: Any])
            #expect((json["signer"] as? [String: Any])?["site"] as? String == site && json["site"] as? String == site)
        }
        // Alice's workspace holds no owner key: its signing key is not the owner's.
        let ownerKey = try String(contentsOfFile: cli.path("study/keys/signing.pem"), encoding: .utf8)
        #expect(try String(contentsOfFile: cli.path("alice-ws/keys/signing.pem"), encoding: .utf8) != ownerKey)
    }
}
