import Foundation
import Testing

/// Revocation of a site's signing key (`site.key_revoked`): after `site rotate-key`, the departed
/// coordinator still holds the old `signing.pem`. What it signs from the revocation on — a
/// checkpoint, a manifest, a receipt — is refused by `audit verify`, `verify -w` and
/// `receipt verify -w` from the owner's and the other site's workspaces; what it signed before
/// stays valid; a revocation the owner's key did not sign is reported and revokes nothing.
extension SiteKeysCLITests {
    /// Re-signs `body` (a receipt's signed text) with `key`, naming `fingerprint` as its key line.
    static func resignReceipt(_ body: String, key: String, fingerprint: String, cli: CLI, to file: String) throws {
        try body.write(toFile: cli.path("resign-body.txt"), atomically: true, encoding: .utf8)
        try sign(cli.path("resign-body.txt"), key: key, to: cli.path("resign.sig"))
        let signature = try Data(contentsOf: URL(fileURLWithPath: cli.path("resign.sig"))).base64EncodedString()
        try (body + "-----BEGIN COHORT SIGNATURE-----\nkey: \(fingerprint)\n" + signature + "\n-----END COHORT SIGNATURE-----\n")
            .write(toFile: file, atomically: true, encoding: .utf8)
    }

    /// The archive `export` wrote into `out`.
    static func archive(in out: String) throws -> String {
        out + "/" + (try #require(try FileManager.default.contentsOfDirectory(atPath: out).first { $0.hasSuffix(".tar.gz") }))
    }

    @Test(.enabled(if: CLI.store == .postgres, "runs in the PostgreSQL pass of scripts/test.sh (COHORT_TEST_STORE=postgres)"))
    func aRotatedSitesOldKeySignsNothingAfterItsRevocation() throws {
        let sites = try TwoSites()
        let cli = sites.cli
        defer { cli.cleanup() }
        // Before the coordinator leaves: A exports its site and withdraws P-0001 (receipt signed by A's key).
        let export = try cli.run(["export", "--recipient", "lab", "--site", "site-a", "--out", cli.path("before"), "-w", sites.alice])
        try #require(export.status == 0, "\(export.output)")
        let before = try Self.archive(in: cli.path("before"))
        let oldFingerprint = try #require(try Self.fingerprint(fromVerify: cli.run(["verify", before, "-w", sites.alice]).stdout))
        let withdraw = try cli.run(
            ["withdraw", "--participant", "P-0001", "--staff", "--reason", "moved away", "--mode", "stop", "--yes", "--receipt", cli.path("r1.txt"), "-w", sites.alice])
        try #require(withdraw.status == 0, "\(withdraw.output)")
        let oldKey = cli.path("departed.pem")
        try FileManager.default.copyItem(atPath: sites.alice + "/keys/signing.pem", toPath: oldKey)

        // The owner rotates site A: the old signing key is revoked in the same operation.
        let rotate = try cli.ws("site", "rotate-key", "--site", "site-a", "--role", sites.aliceRole, "--out", cli.path("rotated-a"))
        try #require(rotate.status == 0, "\(rotate.output)")
        let marker = "revoked the site's earlier signing key \(oldFingerprint) at audit event "
        let revokedText = try #require(rotate.stdout.components(separatedBy: marker).dropFirst().first?.prefix { $0.isNumber }, "\(rotate.output)")
        let revokedAt = try #require(Int(revokedText))
        // Recomputed independently: the trail's site.key_revoked event names the old key at that seq.
        let (_, row) = try cli.sql("SELECT seq FROM audit_events WHERE action = 'site.key_revoked' AND details->>'key_fingerprint' = '\(oldFingerprint)'")
        #expect(row.trimmingCharacters(in: .whitespacesAndNewlines) == String(revokedAt), "\(row)")
        let revokedDetail = "site site-a's key revoked at event \(revokedAt)"
        let alice2 = cli.path("alice2")
        let rejoin = try cli.run(["site", "join", cli.path("rotated-a"), "-w", alice2])
        try #require(rejoin.status == 0, "\(rejoin.output)")
        // The old workspace is refused (its KEK no longer opens anything either).
        #expect(try cli.run(["participant", "list", "-w", sites.alice]).status == 6)

        // What the old key signed before the revocation stays valid, from the owner and the other site.
        for workspace in [cli.workspace, sites.bob] {
            let verify = try cli.run(["verify", before, "-w", workspace])
            #expect(verify.status == 0 && verify.stdout.contains("before its revocation at event \(revokedAt)"), "\(verify.output)")
            let audit = try cli.run(["audit", "verify", "-w", workspace])
            #expect(audit.status == 0, "\(audit.output)")
        }
        for workspace in [cli.workspace, alice2] {
            let receipt = try cli.run(["receipt", "verify", cli.path("r1.txt"), "-w", workspace])
            #expect(receipt.status == 0 && receipt.stdout.contains("authentic"), "\(receipt.output)")
        }

        // A revocation appended as the tables' owner without the owner's signature is reported and revokes nothing.
        let bobExport = try cli.run(["export", "--recipient", "lab", "--site", "site-b", "--out", cli.path("bob-out"), "-w", sites.bob])
        try #require(bobExport.status == 0, "\(bobExport.output)")
        let bobFingerprint = try #require(try Self.fingerprint(fromVerify: cli.run(["verify", Self.archive(in: cli.path("bob-out")), "-w", sites.bob]).stdout))
        let (forged, forgedOut) = try cli.sql(
            "SELECT o_seq FROM cohort_append_event('2026-03-02T00:00:00.000Z', 'x', 'site.key_revoked', NULL, "
                + "'{\"site\": \"site-b\", \"key_fingerprint\": \"\(bobFingerprint)\"}')")
        #expect(forged == 0, "\(forgedOut)")
        for workspace in [cli.workspace, sites.bob] {
            let audit = try cli.run(["audit", "verify", "-w", workspace])
            #expect(audit.status != 0 && audit.output.contains("the revocation of \(bobFingerprint) is not signed by the owner's key"), "\(audit.output)")
        }
        let bobStill = try cli.run(["participant", "list", "-w", sites.bob])
        #expect(bobStill.status == 0, "\(bobStill.output)")
        let bobVerify = try cli.run(["verify", Self.archive(in: cli.path("bob-out")), "-w", cli.workspace])
        #expect(bobVerify.stdout.contains("site site-b's key (registered at event") && !bobVerify.stdout.contains("revoked"), "\(bobVerify.output)")

        // After the revocation: the new coordinator exports; the departed one re-signs that manifest with the old key.
        let after = try cli.run(["export", "--recipient", "lab", "--site", "site-a", "--out", cli.path("after"), "-w", alice2])
        try #require(after.status == 0, "\(after.output)")
        let afterArchive = try Self.archive(in: cli.path("after"))
        let manifest = afterArchive.replacingOccurrences(of: ".tar.gz", with: ".manifest.json")
        let newFingerprint = try #require(try Self.fingerprint(fromVerify: cli.run(["verify", afterArchive, "-w", alice2]).stdout))
        try String(contentsOfFile: manifest, encoding: .utf8).replacingOccurrences(of: newFingerprint, with: oldFingerprint)
            .write(toFile: manifest, atomically: true, encoding: .utf8)
        try Self.sign(manifest, key: oldKey, to: manifest + ".sig")
        for workspace in [cli.workspace, sites.bob] {
            let verify = try cli.run(["verify", afterArchive, "-w", workspace])
            #expect(verify.status == 1 && verify.stdout.contains(revokedDetail), "\(verify.output)")
        }
        let beforeManifest = before.replacingOccurrences(of: ".tar.gz", with: ".manifest.json")
        let exportAudit = try cli.run(["audit", "verify", "--export-manifest", beforeManifest, manifest, "-w", cli.workspace])
        #expect(exportAudit.status != 0 && exportAudit.output.contains("✔ \(beforeManifest)"), "\(exportAudit.output)")
        #expect(exportAudit.output.contains("✘ \(manifest): the export at audit event") && exportAudit.output.contains(revokedDetail), "\(exportAudit.output)")

        // A receipt of a withdrawal after the revocation, re-signed with the old key.
        let withdraw2 = try cli.run(
            ["withdraw", "--participant", "P-0002", "--staff", "--reason", "moved away", "--mode", "stop", "--yes", "--receipt", cli.path("r2.txt"), "-w", alice2])
        try #require(withdraw2.status == 0, "\(withdraw2.output)")
        let body = try #require(try String(contentsOfFile: cli.path("r2.txt"), encoding: .utf8).components(separatedBy: "-----BEGIN COHORT SIGNATURE-----").first)
        try Self.resignReceipt(body, key: oldKey, fingerprint: oldFingerprint, cli: cli, to: cli.path("r2-old.txt"))
        for workspace in [cli.workspace, sites.bob] {
            let receipt = try cli.run(["receipt", "verify", cli.path("r2-old.txt"), "-w", workspace])
            #expect(receipt.status != 0 && receipt.stdout.contains(revokedDetail), "\(receipt.output)")
        }
        // The old key's signature over the genuine pre-revocation receipt text is still accepted (same bytes, same key).
        let genuine = try cli.run(["receipt", "verify", cli.path("r1.txt"), "-w", cli.workspace])
        #expect(genuine.status == 0, "\(genuine.output)")

        // A checkpoint of a later head signed with the old key, stored with the old role.
        let (noted, notedOut) = try cli.sql(
            "SELECT o_seq FROM cohort_append_event('2026-03-03T00:00:00.000Z', 'x', 'participant.note', NULL, '{}')", workspace: sites.alice)
        #expect(noted == 0, "\(notedOut)")
        let (_, head) = try cli.sql("SELECT seq || ' ' || hash FROM audit_events ORDER BY seq DESC LIMIT 1")
        let parts = head.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ")
        try #require(parts.count == 2)
        try "cohort/audit-checkpoint@1 seq=\(parts[0]) head=\(parts[1])".write(toFile: cli.path("cp.txt"), atomically: true, encoding: .utf8)
        try Self.sign(cli.path("cp.txt"), key: oldKey, to: cli.path("cp.sig"))
        let cpSignature = try Data(contentsOf: URL(fileURLWithPath: cli.path("cp.sig"))).base64EncodedString()
        let (stored, storedOut) = try cli.sql(
            "SELECT cohort_append_checkpoint(\(parts[0]), '\(cpSignature)', '2026-03-03T00:00:00.000Z')", workspace: sites.alice)
        #expect(stored == 0, "\(storedOut)")
        for workspace in [cli.workspace, sites.bob] {
            let audit = try cli.run(["audit", "verify", "-w", workspace])
            #expect(audit.status != 0 && audit.output.contains("checkpoint at event \(parts[0]): signed by \(revokedDetail)"), "\(audit.output)")
        }
    }

    /// `site revoke-key`: owner only, a dry run changes nothing, and the revoked workspace is refused.
    @Test(.enabled(if: CLI.store == .postgres, "runs in the PostgreSQL pass of scripts/test.sh (COHORT_TEST_STORE=postgres)"))
    func revokeKeyIsTheOwnersAndRefusesTheRevokedWorkspace() throws {
        let sites = try TwoSites()
        let cli = sites.cli
        defer { cli.cleanup() }
        let export = try cli.run(["export", "--recipient", "lab", "--site", "site-b", "--out", cli.path("b"), "-w", sites.bob])
        try #require(export.status == 0, "\(export.output)")
        let bFingerprint = try #require(try Self.fingerprint(fromVerify: cli.run(["verify", Self.archive(in: cli.path("b")), "-w", sites.bob]).stdout))
        let help = try cli.run(["site", "revoke-key", "--help"])
        #expect(help.status == 0 && help.stdout.contains("Examples:"), "\(help.output)")
        let rogue = try cli.run(["site", "revoke-key", "--site", "site-b", "--key", bFingerprint, "--yes", "-w", sites.alice])
        #expect(rogue.status == 6 && rogue.stderr.contains("only the study owner"), "\(rogue.output)")
        let wrongSite = try cli.ws("site", "revoke-key", "--site", "site-a", "--key", bFingerprint, "--yes")
        #expect(wrongSite.status != 0 && wrongSite.stderr.contains("no signing key with that fingerprint is registered for site site-a"), "\(wrongSite.output)")
        let dry = try cli.ws("site", "revoke-key", "--site", "site-b", "--key", bFingerprint, "--dry-run")
        #expect(dry.status == 0 && dry.stdout.contains("Nothing was changed"), "\(dry.output)")
        let unconfirmed = try cli.ws("site", "revoke-key", "--site", "site-b", "--key", bFingerprint)
        #expect(unconfirmed.status == 1, "\(unconfirmed.output)")
        #expect(try cli.sql("SELECT count(*) FROM audit_events WHERE action = 'site.key_revoked'").1.hasPrefix("0"))
        #expect(try cli.run(["participant", "list", "-w", sites.bob]).status == 0)

        let revoke = try cli.ws("site", "revoke-key", "--site", "site-b", "--key", bFingerprint, "--yes")
        #expect(revoke.status == 0 && revoke.stdout.contains("Revoked site site-b's key \(bFingerprint) at audit event"), "\(revoke.output)")
        let refused = try cli.run(["participant", "list", "-w", sites.bob])
        #expect(refused.status == 6 && refused.stderr.contains("the owner revoked at audit event"), "\(refused.output)")
        // B's earlier export still verifies; the owner's and A's trails stay intact.
        for workspace in [cli.workspace, sites.alice] {
            #expect(try cli.run(["verify", Self.archive(in: cli.path("b")), "-w", workspace]).status == 0)
            let audit = try cli.run(["audit", "verify", "-w", workspace])
            #expect(audit.status == 0, "\(audit.output)")
        }
        let again = try cli.ws("site", "revoke-key", "--site", "site-b", "--key", bFingerprint, "--yes")
        #expect(again.status != 0 && again.stderr.contains("already revoked"), "\(again.output)")
    }
}
