import CohortPostgres
import Foundation
import Testing

/// Per-site signing keys (issue #30 items 3 and 2), on PostgreSQL: the owner invites a
/// coordinator per site (`cohort site invite`, a new key registered in the trail), each joins
/// (`cohort site join`), and each site's key signs its own exports, receipts and checkpoints. Then
/// site A, with its own key, re-signs site B's manifest, turns B's receipt into its own, signs a
/// checkpoint with a key the trail never registered, and tries to invite for site B: each is
/// refused or detected by `verify -w`, `receipt verify -w` or `audit verify`, from every workspace.
@Suite(.serialized)
struct SiteKeysCLITests {
    /// The two-site study of SitesCLITests (P-0001/P-0002 at site-a, P-0003 at site-b), the sites'
    /// roles, a login role per coordinator, and their joined workspaces.
    struct TwoSites {
        let cli: CLI
        let alice: String, bob: String
        let aliceRole: String, bobRole: String

        init() throws {
            cli = try SitesCLITests.workspace()
            let suffix = UUID().uuidString.prefix(8).lowercased()
            aliceRole = "alice_" + suffix
            bobRole = "bob_" + suffix
            for role in [aliceRole, bobRole] {
                let (made, out) = try cli.sql("CREATE ROLE \(role) LOGIN")
                try #require(made == 0, "\(out)")
            }
            for (site, role) in [("site-a", aliceRole), ("site-b", bobRole)] {
                #expect(try cli.ws("site", "add", site).status == 0)
                let grant = try cli.ws("site", "grant", site, "--role", role)
                #expect(grant.status == 0, "\(grant.output)")
            }
            alice = cli.path("alice")
            bob = cli.path("bob")
            for (site, role, workspace) in [("site-a", aliceRole, alice), ("site-b", bobRole, bob)] {
                let invitation = cli.path("invite-\(site)")
                let invite = try cli.ws("site", "invite", "--site", site, "--role", role, "--out", invitation)
                try #require(invite.status == 0, "\(invite.output)")
                #expect(invite.stdout.contains("registered for site \(site)"), "\(invite.stdout)")
                let join = try cli.run(["site", "join", invitation, "-w", workspace])
                try #require(join.status == 0, "\(join.output)")
                #expect(join.stdout.contains("Joined site \(site) as database role \(role)"), "\(join.stdout)")
            }
        }

    }

    /// Signs `file` with the Ed25519 key in `key` (openssl, as an attacker holding the key would).
    static func sign(_ file: String, key: String, to signature: String) throws {
        let (status, out) = try CLI.tool("/usr/bin/openssl", ["pkeyutl", "-sign", "-rawin", "-inkey", key, "-in", file, "-out", signature])
        try #require(status == 0, "\(out)")
    }

    @Test(.enabled(if: CLI.store == .postgres, "runs in the PostgreSQL pass of scripts/test.sh (COHORT_TEST_STORE=postgres)"))
    func eachSiteSignsItsOwnAndNoOneElses() throws {
        let sites = try TwoSites()
        let cli = sites.cli
        defer { cli.cleanup() }
        // The invitation holds no owner key: its signing key differs from the owner's, and the owner's is not in it.
        let ownerKey = try String(contentsOfFile: cli.workspace + "/keys/signing.pem", encoding: .utf8)
        for workspace in [sites.alice, sites.bob] {
            #expect(try String(contentsOfFile: workspace + "/keys/signing.pem", encoding: .utf8) != ownerKey)
            let mode = try FileManager.default.attributesOfItem(atPath: workspace + "/keys/signing.pem")[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }

        // Each site exports its own site, signed by its key; a study-wide export from a site's workspace is refused.
        let wide = try cli.run(["export", "--recipient", "lab", "--out", cli.path("wide"), "-w", sites.alice])
        #expect(wide.status == 6 && wide.stderr.contains("signs for site site-a only"), "\(wide.output)")
        var archives: [String: String] = [:]
        for (site, workspace) in [("site-a", sites.alice), ("site-b", sites.bob)] {
            let out = cli.path("out-\(site)")
            let export = try cli.run(["export", "--recipient", "lab", "--site", site, "--out", out, "-w", workspace])
            try #require(export.status == 0, "\(export.output)")
            let name = try #require(try FileManager.default.contentsOfDirectory(atPath: out).first { $0.hasSuffix(".tar.gz") })
            archives[site] = out + "/" + name
            let manifest = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/" + name.replacingOccurrences(of: ".tar.gz", with: ".manifest.json"))))
                    as? [String: Any])
            #expect((manifest["signer"] as? [String: Any])?["site"] as? String == site)
        }
        // A monitor (study-wide role, its own key registered as study-wide) exports the whole study.
        let monitorRole = "monitor_" + UUID().uuidString.prefix(8).lowercased()
        #expect(try cli.sql("CREATE ROLE \(monitorRole) LOGIN").0 == 0)
        #expect(try cli.ws("site", "grant", "--study-wide", "--role", monitorRole).status == 0)
        let monitorInvite = try cli.ws("site", "invite", "--study-wide", "--role", monitorRole, "--out", cli.path("invite-monitor"))
        try #require(monitorInvite.status == 0, "\(monitorInvite.output)")
        let monitor = cli.path("monitor")
        let monitorJoin = try cli.run(["site", "join", cli.path("invite-monitor"), "-w", monitor])
        try #require(monitorJoin.status == 0 && monitorJoin.stdout.contains("Joined every site (study-wide)"), "\(monitorJoin.output)")
        let wideExport = try cli.run(["export", "--recipient", "lab", "--out", cli.path("out-wide"), "-w", monitor])
        try #require(wideExport.status == 0, "\(wideExport.output)")
        let wideArchive = try #require(try FileManager.default.contentsOfDirectory(atPath: cli.path("out-wide")).first { $0.hasSuffix(".tar.gz") })
        let wideVerify = try cli.run(["verify", cli.path("out-wide") + "/" + wideArchive, "-w", sites.alice])
        #expect(wideVerify.status == 0 && wideVerify.stdout.contains("the study-wide role's key (registered at event"), "\(wideVerify.output)")

        // Every workspace (owner, both sites) verifies both exports against the trail's registry.
        for workspace in [cli.workspace, sites.alice, sites.bob] {
            for site in ["site-a", "site-b"] {
                let verify = try cli.run(["verify", archives[site] ?? "", "-w", workspace])
                #expect(verify.status == 0 && verify.stdout.contains("site \(site)'s key (registered at event"), "\(site) from \(workspace): \(verify.output)")
            }
            // Each site's manifest carries a checkpoint signed by its site's key: every workspace finds it in the trail.
            let manifests = ["site-a", "site-b"].map { (archives[$0] ?? "").replacingOccurrences(of: ".tar.gz", with: ".manifest.json") }
            let audit = try cli.run(["audit", "verify", "--export-manifest"] + manifests + ["-w", workspace])
            #expect(audit.status == 0, "\(audit.output)")
        }

        // Attack 1: A re-signs B's manifest with its own key (fingerprint swapped in, claiming site-b).
        let bArchive = archives["site-b"] ?? ""
        let bManifest = bArchive.replacingOccurrences(of: ".tar.gz", with: ".manifest.json")
        let aPub = try String(contentsOfFile: sites.alice + "/keys/signing.pub.pem", encoding: .utf8)
        let aFingerprint = try #require(try Self.fingerprint(fromVerify: cli.run(["verify", archives["site-a"] ?? "", "-w", sites.alice]).stdout))
        let bManifestText = try String(contentsOfFile: bManifest, encoding: .utf8)
        let bFingerprint = try #require(try Self.fingerprint(fromVerify: cli.run(["verify", bArchive, "-w", sites.bob]).stdout))
        try bManifestText.replacingOccurrences(of: bFingerprint, with: aFingerprint).write(toFile: bManifest, atomically: true, encoding: .utf8)
        try Self.sign(bManifest, key: sites.alice + "/keys/signing.pem", to: bManifest + ".sig")
        for workspace in [cli.workspace, sites.bob, sites.alice] {
            let verify = try cli.run(["verify", bArchive, "-w", workspace])
            #expect(verify.status == 1 && verify.stdout.contains("site site-a's key (event"), "\(verify.output)")
        }
        // Offline with A's public key the signature holds, and the check says what it could not check.
        try aPub.write(toFile: cli.path("a.pub.pem"), atomically: true, encoding: .utf8)
        let offline = try cli.run(["verify", bArchive, "--public-key", cli.path("a.pub.pem")])
        #expect(offline.stdout.contains("was not checked (give -w WORKSPACE)"), "\(offline.output)")

        // Attack 2: B's participant withdraws (a receipt signed by B's key); A re-signs that receipt with its key.
        let withdraw = try cli.run(
            ["withdraw", "--participant", "P-0003", "--staff", "--reason", "moved away", "--mode", "stop", "--yes", "--receipt", cli.path("b.txt"), "-w", sites.bob])
        try #require(withdraw.status == 0, "\(withdraw.output)")
        let genuine = try cli.run(["receipt", "verify", cli.path("b.txt"), "-w", cli.workspace])
        #expect(genuine.status == 0 && genuine.stdout.contains("authentic"), "\(genuine.output)")
        let receipt = try String(contentsOfFile: cli.path("b.txt"), encoding: .utf8)
        let signed = try #require(receipt.components(separatedBy: "-----BEGIN COHORT SIGNATURE-----").first)
        let body = signed.replacingOccurrences(of: "Signed for site: site-b\n", with: "Signed for site: site-a\n")
        try body.write(toFile: cli.path("forged-body.txt"), atomically: true, encoding: .utf8)
        try Self.sign(cli.path("forged-body.txt"), key: sites.alice + "/keys/signing.pem", to: cli.path("forged.sig"))
        let signature = try Data(contentsOf: URL(fileURLWithPath: cli.path("forged.sig"))).base64EncodedString()
        try (body + "-----BEGIN COHORT SIGNATURE-----\nkey: \(aFingerprint)\n" + signature + "\n-----END COHORT SIGNATURE-----\n")
            .write(toFile: cli.path("forged.txt"), atomically: true, encoding: .utf8)
        for workspace in [cli.workspace, sites.alice, sites.bob] {
            let forged = try cli.run(["receipt", "verify", cli.path("forged.txt"), "-w", workspace])
            #expect(forged.status != 0 && forged.stdout.contains("by site site-a's key, and the participant is site site-b's"), "\(forged.output)")
        }

        // Attack 3: A appends an event and stores a checkpoint of it signed by a key the trail never registered.
        let (noted, notedOut) = try cli.sql(
            "SELECT o_seq FROM cohort_append_event('2026-03-01T00:00:00.000Z', 'x', 'participant.note', NULL, '{}')", workspace: sites.alice)
        #expect(noted == 0, "\(notedOut)")
        let (_, head) = try cli.sql("SELECT seq || ' ' || hash FROM audit_events ORDER BY seq DESC LIMIT 1")
        let parts = head.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ")
        try #require(parts.count == 2)
        let (made, _) = try CLI.tool("/usr/bin/openssl", ["genpkey", "-algorithm", "ed25519", "-out", cli.path("rogue.pem")])
        try #require(made == 0)
        try "cohort/audit-checkpoint@1 seq=\(parts[0]) head=\(parts[1])".write(toFile: cli.path("cp.txt"), atomically: true, encoding: .utf8)
        try Self.sign(cli.path("cp.txt"), key: cli.path("rogue.pem"), to: cli.path("cp.sig"))
        let cpSignature = try Data(contentsOf: URL(fileURLWithPath: cli.path("cp.sig"))).base64EncodedString()
        let (stored, storedOut) = try cli.sql(
            "SELECT cohort_append_checkpoint(\(parts[0]), '\(cpSignature)', '2026-03-01T00:00:00.000Z')", workspace: sites.alice)
        #expect(stored == 0, "\(storedOut)")
        for workspace in [cli.workspace, sites.bob] {
            let audit = try cli.run(["audit", "verify", "-w", workspace])
            #expect(audit.status != 0 && audit.output.contains("by no key the trail registered"), "\(audit.output)")
        }

        // Attack 4: A's workspace cannot invite for site B (nor register any key).
        let invite = try cli.run(["site", "invite", "--site", "site-b", "--out", cli.path("rogue-invite"), "-w", sites.alice])
        #expect(invite.status == 6 && invite.stderr.contains("only the study owner"), "\(invite.output)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("rogue-invite")))
    }

    /// `site join` installs only an invitation nobody else could read, for a role that is a
    /// coordinator of the site and not the owner; each refusal leaves nothing at `-w`.
    @Test(.enabled(if: CLI.store == .postgres, "runs in the PostgreSQL pass of scripts/test.sh (COHORT_TEST_STORE=postgres)"))
    func joinRefusesAnExposedInvitationAndTheWrongRole() throws {
        let cli = try SitesCLITests.workspace()
        defer { cli.cleanup() }
        let carol = "carol_" + UUID().uuidString.prefix(8).lowercased()
        let (made, out) = try cli.sql("CREATE ROLE \(carol) LOGIN")
        try #require(made == 0, "\(out)")
        #expect(try cli.ws("site", "add", "site-a").status == 0)
        // Carol is not granted site-a; an invitation without --role connects as the owner.
        let forCarol = try cli.ws("site", "invite", "--site", "site-a", "--role", carol, "--out", cli.path("inv-carol"))
        try #require(forCarol.status == 0, "\(forCarol.output)")
        let notMember = try cli.run(["site", "join", cli.path("inv-carol"), "-w", cli.path("ws-carol")])
        #expect(notMember.status == 6 && notMember.stderr.contains("is not a coordinator of site site-a"), "\(notMember.output)")
        let asOwner = try cli.ws("site", "invite", "--site", "site-a", "--out", cli.path("inv-owner"))
        try #require(asOwner.status == 0, "\(asOwner.output)")
        let owner = try cli.run(["site", "join", cli.path("inv-owner"), "-w", cli.path("ws-owner")])
        #expect(owner.status == 6 && owner.stderr.contains("the study owner's role"), "\(owner.output)")
        // An invitation a group could read on the way is refused, whoever joins.
        #expect(try cli.ws("site", "grant", "site-a", "--role", carol).status == 0)
        _ = chmod(cli.path("inv-carol") + "/keys/pii.key", 0o640)
        let exposed = try cli.run(["site", "join", cli.path("inv-carol"), "-w", cli.path("ws-carol")])
        #expect(exposed.status == 6 && exposed.stderr.contains("accessible to group or others"), "\(exposed.output)")
        for folder in ["ws-carol", "ws-owner"] { #expect(!FileManager.default.fileExists(atPath: cli.path(folder)), "\(folder)") }
        _ = chmod(cli.path("inv-carol") + "/keys/pii.key", 0o600)
        let joined = try cli.run(["site", "join", cli.path("inv-carol"), "-w", cli.path("ws-carol")])
        #expect(joined.status == 0, "\(joined.output)")
        let mode = try FileManager.default.attributesOfItem(atPath: cli.path("ws-carol"))[.posixPermissions] as? Int
        #expect(mode == 0o700)
    }

    /// A single-site study on study.db has no sites to invite: refused, nothing written.
    @Test(.enabled(if: CLI.store == .sqlite, "runs in the SQLite pass"))
    func inviteNeedsAPostgreSQLStudy() throws {
        let cli = try CLI.withWorkspace(protocolFile: "protocols/minimal.yaml")
        defer { cli.cleanup() }
        let invite = try cli.ws("site", "invite", "--site", "site-a", "--out", cli.path("inv"))
        #expect(invite.status == 3 && invite.stderr.contains("PostgreSQL"), "\(invite.output)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("inv")))
        let help = try cli.run(["site", "invite", "--help"])
        #expect(help.status == 0 && help.stdout.contains("Examples:"))
    }

    /// The signer's fingerprint from `verify`'s "signer key" line (`Ed25519 SHA256:…`).
    static func fingerprint(fromVerify output: String) -> String? {
        guard let range = output.range(of: "Ed25519 SHA256:") else { return nil }
        let rest = output[range.upperBound...]
        return "SHA256:" + rest.prefix { $0.isHexDigit }
    }
}
