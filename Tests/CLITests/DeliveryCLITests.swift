import Foundation
import Testing

/// Secure transmission end to end: `cohort export --encrypt-to` (CMS through the system OpenSSL,
/// opened with stock `openssl cms`), `cohort verify X.p7m --decrypt-key`, and `cohort deliver`
/// to a real `sshd` on loopback — pinned host keys, read-back, resume, tampering, the audit
/// trail. Certificates come from a throwaway CA made with the `openssl` command; every figure
/// the product prints (digests, fingerprints) is recomputed here with other tools.
@Suite(.serialized)
struct DeliveryCLITests {
    /// A workspace with three consented participants and 19 days of records, no k-anonymity.
    static func exportedWorkspace() throws -> CLI {
        let cli = try ExportConsentCLITests.workspace(try ExportConsentCLITests.studyProtocol(), count: 3)
        for code in ["P-0001", "P-0002", "P-0003"] {
            let r = try cli.ws("consent", "record", "--participant", code, "--consent-version", "1.1", "--signed-at", "\(CLI.day(-20))T12:00:00Z", "--sharing", "broad")
            try #require(r.status == 0, "\(r.output)")
        }
        try ExportConsentCLITests.importRecords(cli, ["P-0001", "P-0002", "P-0003"])
        return cli
    }

    static func sha256(_ path: String) throws -> String {
        let (status, out) = try CLI.tool("/usr/bin/sha256sum", [path])
        try #require(status == 0)
        return String(out.prefix(64))
    }

    static func files(_ folder: String) -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted() }

    static func manifest(_ path: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
    }

    /// `openssl x509 -fingerprint -sha256`, as lowercase hex without colons.
    static func certificateFingerprint(_ cert: String, _ ca: ScratchCA) throws -> String {
        let out = try ca.openssl(["x509", "-noout", "-fingerprint", "-sha256", "-in", cert])
        return String(out.split(separator: "=").last ?? "").trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: ":", with: "").lowercased()
    }

    @Test func anEncryptedExportOpensWithStockOpenSSLAndVerifies() throws {
        let cli = try Self.exportedWorkspace()
        defer { cli.cleanup() }
        let ca = try ScratchCA(in: cli.directory.appendingPathComponent("ca"))
        let rsa = try ca.issue("lab-rsa", commonName: "Outside Analytics Lab")
        let ec = try ca.issue("lab-ec", commonName: "EC Lab", kind: "ec")
        let out = cli.path("out")
        let r = try cli.ws("export", "--encrypt-to", rsa.cert, "--encrypt-to", ec.cert, "--ca", ca.path("ca.pem"), "--out", out)
        try #require(r.status == 0, "\(r.output)")
        #expect(r.stdout.contains("for Outside Analytics Lab"), "the certificate's subject names the recipient: \(r.stdout)")
        let names = Self.files(out)
        #expect(names.count == 3 && names.contains { $0.hasSuffix(".tar.gz.p7m") } && !names.contains { $0.hasSuffix(".tar.gz") }, "no plaintext archive is left: \(names)")
        let p7m = out + "/" + (try #require(names.first { $0.hasSuffix(".p7m") }))
        let manifestPath = out + "/" + (try #require(names.first { $0.hasSuffix(".manifest.json") }))
        let manifest = try Self.manifest(manifestPath)
        let encrypted = try #require(manifest["encrypted"] as? [String: Any])
        #expect(encrypted["sha256"] as? String == (try Self.sha256(p7m)))
        #expect((encrypted["size"] as? NSNumber)?.intValue == (try FileManager.default.attributesOfItem(atPath: p7m)[.size] as? Int))
        #expect(encrypted["cipher"] as? String == "aes-256-gcm")
        let fingerprints = Set(((encrypted["recipients"] as? [[String: Any]]) ?? []).compactMap { $0["certificate_sha256"] as? String })
        #expect(fingerprints == [try Self.certificateFingerprint(rsa.cert, ca), try Self.certificateFingerprint(ec.cert, ca)])
        // The structure, as OpenSSL reads it: AuthEnvelopedData, AES-256-GCM, RSA-OAEP and ECDH.
        let structure = try ca.openssl(["cms", "-cmsout", "-print", "-inform", "DER", "-in", p7m])
        for expected in ["id-smime-ct-authEnvelopedData", "aes-256-gcm", "rsaesOaep", "dhSinglePass-stdDH-sha256kdf-scheme"] {
            #expect(structure.contains(expected), "the envelope holds \(expected)")
        }
        // Each recipient decrypts with stock OpenSSL; the plaintext is the manifest's archive.
        let archiveSHA = try #require((manifest["archive"] as? [String: Any])?["sha256"] as? String)
        for (name, pair) in [("rsa", rsa), ("ec", ec)] {
            let plain = cli.path("\(name).tar.gz")
            try ca.openssl(["cms", "-decrypt", "-in", p7m, "-inform", "DER", "-inkey", pair.key, "-recip", pair.cert, "-out", plain])
            #expect(try Self.sha256(plain) == archiveSHA, "\(name) recipient's plaintext is the signed archive")
        }
        // The recipient's verify: decrypts and runs every check; the plaintext verifies as today.
        let v = try cli.run(["verify", p7m, "--decrypt-key", ec.key, "--recipient-cert", ec.cert, "--public-key", cli.workspace + "/keys/signing.pub.pem"])
        #expect(v.status == 0, "\(v.output)")
        for check in ["encrypted file", "recipient certificate", "decryption", "archive digest", "consent"] { #expect(v.stdout.contains(check), "verify ran \(check)") }
        let archive = out + "/" + names.first { $0.hasSuffix(".p7m") }!.replacingOccurrences(of: ".p7m", with: "")
        try FileManager.default.moveItem(atPath: cli.path("rsa.tar.gz"), toPath: archive)
        let plainVerify = try cli.ws("verify", archive)
        #expect(plainVerify.status == 0, "\(plainVerify.output)")
        // A wrong key and an altered .p7m fail verification.
        let other = try ca.issue("other", commonName: "Someone Else")
        let wrong = try cli.run(["verify", p7m, "--decrypt-key", other.key, "--recipient-cert", other.cert, "-w", cli.workspace])
        #expect(wrong.status == 1 && wrong.stdout.contains("✘ recipient certificate") && wrong.stdout.contains("✘ decryption"), "\(wrong.output)")
        let handle = try #require(FileHandle(forUpdatingAtPath: p7m))
        try handle.seek(toOffset: 2_000)
        let byte = try #require(try handle.read(upToCount: 1)).first ?? 0
        try handle.seek(toOffset: 2_000)
        handle.write(Data([byte ^ 0xFF]))
        try handle.close()
        let altered = try cli.run(["verify", p7m, "--decrypt-key", rsa.key, "--recipient-cert", rsa.cert, "-w", cli.workspace])
        #expect(altered.status == 1 && altered.stdout.contains("✘ encrypted file") && altered.stdout.contains("✘ decryption"), "\(altered.output)")
        // The trail names both digests.
        let audit = try cli.ws("audit", "show", "--format", "json")
        #expect(audit.stdout.contains(archiveSHA) && audit.stdout.contains(encrypted["sha256"] as? String ?? "-"))
    }

    @Test func cbcKeepPlaintextAndARecipientNameOverride() throws {
        let cli = try Self.exportedWorkspace()
        defer { cli.cleanup() }
        let ca = try ScratchCA(in: cli.directory.appendingPathComponent("ca"))
        let rsa = try ca.issue("lab", commonName: "Lab with a (long) name")
        let out = cli.path("out")
        let refused = try cli.ws("export", "--encrypt-to", rsa.cert, "--out", out)
        #expect(refused.status == 3 && refused.output.contains("--recipient"), "a subject that is not a recipient name asks for --recipient: \(refused.output)")
        let r = try cli.ws("export", "--encrypt-to", rsa.cert, "--recipient", "Lab B", "--cipher", "aes-256-cbc", "--keep-plaintext", "--out", out)
        try #require(r.status == 0, "\(r.output)")
        let names = Self.files(out)
        #expect(names.filter { $0.hasSuffix(".tar.gz") || $0.hasSuffix(".p7m") }.count == 2, "--keep-plaintext keeps the .tar.gz beside the .p7m: \(names)")
        let p7m = out + "/" + (try #require(names.first { $0.hasSuffix(".p7m") }))
        let structure = try ca.openssl(["cms", "-cmsout", "-print", "-inform", "DER", "-in", p7m])
        #expect(structure.contains("pkcs7-envelopedData") && structure.contains("aes-256-cbc"))
        try ca.openssl(["cms", "-decrypt", "-in", p7m, "-inform", "DER", "-inkey", rsa.key, "-recip", rsa.cert, "-out", cli.path("x.tar.gz")])
        #expect(try Self.sha256(cli.path("x.tar.gz")) == (try Self.sha256(p7m.replacingOccurrences(of: ".p7m", with: ""))))
    }

    @Test func certificatesThatCannotReceiveAreRefusedBeforeAnythingIsWritten() throws {
        let cli = try Self.exportedWorkspace()
        defer { cli.cleanup() }
        let ca = try ScratchCA(in: cli.directory.appendingPathComponent("ca"))
        let expired = try ca.issue("expired", commonName: "Old Lab", start: "20200101000000Z", end: "20210101000000Z")
        let future = try ca.issue("future", commonName: "Future Lab", start: "20380101000000Z", end: "20390101000000Z")
        let signing = try ca.issue("signing", commonName: "Signing Lab", extensions: "signing_only")
        let stranger = try ScratchCA(in: cli.directory.appendingPathComponent("other-ca"))
        let cases: [(cert: String, extra: [String], status: Int32, says: String)] = [
            (expired.cert, [], 6, "expired"), (future.cert, [], 6, "not valid until"), (signing.cert, [], 6, "keyEncipherment"),
            (try ca.issue("good", commonName: "Good Lab").cert, ["--ca", stranger.path("ca.pem")], 6, "does not verify against the CA"),
            (try cli.write("not-a-cert.pem", "hello\n"), [], 3, "not a PEM certificate"),
        ]
        for (index, item) in cases.enumerated() {
            let out = cli.path("out\(index)")
            let r = try cli.ws(["export", "--encrypt-to", item.cert, "--out", out] + item.extra)
            #expect(r.status == item.status && r.stderr.contains(item.says), "case \(index): \(r.output)")
            #expect(Self.files(out).isEmpty, "a refusal leaves nothing in --out: \(Self.files(out))")
        }
        #expect(!(try cli.ws("audit", "show", "--format", "json").stdout.contains("export.begin")), "a refused certificate starts no export")
    }

    @Test(.enabled(if: ScratchSSHServer.availableOrCI, ScratchSSHServer.reason))
    func deliveryPinsTheHostKeyReadsBackAndIsAudited() throws {
        let cli = try Self.exportedWorkspace()
        defer { cli.cleanup() }
        let server = try ScratchSSHServer()
        let ca = try ScratchCA(in: cli.directory.appendingPathComponent("ca"))
        let lab = try ca.issue("lab", commonName: "Outside Analytics Lab", kind: "ec")
        let out = cli.path("out")
        try #require(try cli.ws("export", "--encrypt-to", lab.cert, "--out", out).status == 0)
        let manifestPath = out + "/" + (try #require(Self.files(out).first { $0.hasSuffix(".manifest.json") }))
        let to = server.url + "/axspa"
        let portal = server.inbox + "/axspa"

        // A changed host key: refused before anything is sent, its fingerprint shown and audited.
        let wrongKnown = try cli.write("wrong_known_hosts", try Self.otherHostKeyLine(cli, port: server.port))
        let changed = try cli.ws("deliver", manifestPath, "--to", to, "--known-hosts", wrongKnown, "--identity", server.identity)
        #expect(changed.status == 6 && changed.stderr.contains("differs from the pinned one") && changed.stderr.contains(server.hostKeyFingerprint), "\(changed.output)")
        #expect(!FileManager.default.fileExists(atPath: portal), "nothing reached the server")
        let unknown = try cli.ws("deliver", manifestPath, "--to", to, "--known-hosts", try cli.write("empty_known_hosts", ""), "--identity", server.identity)
        #expect(unknown.status == 6 && unknown.stderr.contains("not in the pinned known-hosts file") && unknown.stderr.contains(server.hostKeyFingerprint), "\(unknown.output)")
        #expect(!FileManager.default.fileExists(atPath: portal))

        // Delivered: exactly the three files, each as sent.
        let done = try cli.ws("deliver", manifestPath, "--to", to, "--known-hosts", server.knownHosts, "--identity", server.identity, "--format", "json")
        try #require(done.status == 0, "\(done.output)")
        #expect(Self.files(portal) == Self.files(out), "the portal holds exactly the export's three files: \(Self.files(portal))")
        for name in Self.files(out) { #expect(try Self.sha256(portal + "/" + name) == (try Self.sha256(out + "/" + name)), "\(name) arrived intact") }
        let result = try #require(try JSONSerialization.jsonObject(with: Data(done.stdout.utf8)) as? [String: String])
        #expect(result["host_key"] == server.hostKeyFingerprint)

        // The trail: the delivery with the host key ssh-keygen computes, the failures with their reasons; never the login.
        let audit = try cli.ws("audit", "show", "--format", "json")
        let events = try #require(try JSONSerialization.jsonObject(with: Data(audit.stdout.utf8)) as? [[String: Any]])
        let delivered = events.filter { $0["action"] as? String == "export.delivered" }
        let failed = events.filter { $0["action"] as? String == "export.delivery_failed" }.compactMap { ($0["details"] as? [String: String])?["reason"] }
        #expect(delivered.count == 1 && failed == ["changed host key", "unknown host key"], "\(failed)")
        let details = try #require(delivered.first?["details"] as? [String: String])
        #expect(details["host_key"] == server.hostKeyFingerprint && details["host"] == "127.0.0.1" && details["port"] == String(server.port) && details["path"] == portal)
        #expect(details["encrypted_sha256"] == (try Self.sha256(out + "/" + Self.files(out).first { $0.hasSuffix(".p7m") }!)))
        #expect(!audit.stdout.contains(server.user + "@"), "the login is not recorded")

        // verify -w names the deliveries of the archive it checks.
        let v = try cli.run(["verify", out + "/" + Self.files(out).first { $0.hasSuffix(".p7m") }!, "--decrypt-key", lab.key, "--recipient-cert", lab.cert, "-w", cli.workspace])
        #expect(v.status == 0 && v.stdout.contains("deliveries") && v.stdout.contains("127.0.0.1:\(portal)"), "\(v.output)")
    }

    @Test(.enabled(if: ScratchSSHServer.availableOrCI, ScratchSSHServer.reason))
    func anInterruptedDeliveryResumesAndATamperedOneIsCaught() throws {
        let cli = try Self.exportedWorkspace()
        defer { cli.cleanup() }
        let server = try ScratchSSHServer()
        // Heart rate every 5 minutes for 10 days: an archive of several SFTP write chunks.
        var csv = "participant,kind,start,value,unit\n"
        for ago in 2...11 {
            for minute in stride(from: 0, to: 24 * 60, by: 5) {
                csv += "P-0001,heart_rate,\(CLI.day(-ago))T\(String(format: "%02d:%02d", minute / 60, minute % 60)):00,\(60 + (minute * 7 + ago) % 40),/min\n"
            }
        }
        try #require(try cli.ws("data", "import", try cli.write("dense.csv", csv)).status == 0)
        let out = cli.path("out")
        try #require(try cli.ws("export", "--recipient", "Lab", "--out", out).status == 0)
        let manifestPath = out + "/" + (try #require(Self.files(out).first { $0.hasSuffix(".manifest.json") }))
        let archive = try #require(Self.files(out).first { $0.hasSuffix(".tar.gz") })
        let size = try #require(try FileManager.default.attributesOfItem(atPath: out + "/" + archive)[.size] as? Int)
        try #require(size > 80_000, "the archive spans several 32 KiB writes, so a cut leaves whole ones behind")
        let args = ["--known-hosts", server.knownHosts, "--identity", server.identity]

        // The server cuts the upload part way: a network failure, a partial file left.
        try server.cutNextSession(after: 40_000)
        let cut = try cli.ws(["deliver", manifestPath, "--to", server.url] + args)
        #expect(cut.status == 10, "\(cut.output)")
        let partial = "." + archive + ".cohort-partial"
        #expect(Self.files(server.inbox) == [partial], "only the partial upload is on the server: \(Self.files(server.inbox))")
        // Run again: it resumes from the partial, reads everything back, and leaves the three files.
        let resumed = try cli.ws(["deliver", manifestPath, "--to", server.url, "--format", "json"] + args)
        try #require(resumed.status == 0, "\(resumed.output)")
        let result = try #require(try JSONSerialization.jsonObject(with: Data(resumed.stdout.utf8)) as? [String: String])
        #expect(result["resumed"] == archive && Int(result["bytes_sent"] ?? "") ?? .max < Int(result["bytes"] ?? "") ?? 0, "\(result)")
        #expect(Self.files(server.inbox) == Self.files(out))
        #expect(try Self.sha256(server.inbox + "/" + archive) == (try Self.sha256(out + "/" + archive)))

        // Altered on the server between upload and read-back: caught, removed, nothing final.
        let second = cli.path("out2")
        try #require(try cli.ws("export", "--recipient", "Lab", "--out", second).status == 0)
        let secondManifest = second + "/" + (try #require(Self.files(second).first { $0.hasSuffix(".manifest.json") }))
        try server.tamperAfterNextSession()
        let to = server.url + "/second"
        let tampered = try cli.ws(["deliver", secondManifest, "--to", to] + args)
        #expect(tampered.status == 7 && tampered.stderr.contains("does not match what was sent"), "\(tampered.output)")
        #expect(Self.files(server.inbox + "/second").isEmpty, "a mismatched upload is removed: \(Self.files(server.inbox + "/second"))")
        let reasons = (try cli.ws("audit", "show", "--format", "json")).stdout
        #expect(reasons.contains("read-back mismatch") && reasons.contains("\"network\""))
        let again = try cli.ws(["deliver", secondManifest, "--to", to] + args)
        #expect(again.status == 0 && Self.files(server.inbox + "/second") == Self.files(second), "\(again.output)")
    }

    /// ECDSA and RSA host keys and identities in OpenSSH formats work as ed25519 does; the
    /// fingerprint recorded is the one ssh-keygen computes for the server's key.
    @Test(.enabled(if: ScratchSSHServer.availableOrCI, ScratchSSHServer.reason), arguments: [("ecdsa", "rsa"), ("rsa", "ecdsa")])
    func ecdsaAndRSAKeysWork(hostKey: String, userKey: String) throws {
        let cli = try Self.exportedWorkspace()
        defer { cli.cleanup() }
        let server = try ScratchSSHServer(hostKey: hostKey, userKey: userKey)
        let out = cli.path("out")
        try #require(try cli.ws("export", "--recipient", "Lab", "--out", out).status == 0)
        let manifestPath = out + "/" + (try #require(Self.files(out).first { $0.hasSuffix(".manifest.json") }))
        let r = try cli.ws("deliver", manifestPath, "--to", server.url, "--known-hosts", server.knownHosts, "--identity", server.identity, "--format", "json")
        #expect(r.status == 0, "\(r.output)")
        let result = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: String])
        #expect(result["host_key"] == server.hostKeyFingerprint)
        #expect(Self.files(server.inbox) == Self.files(out))
    }

    /// The README's "Encrypted to the recipient, delivered to their portal" block, run as written
    /// in bash against the local sshd (its PORTAL_* variables point at it).
    @Test(.enabled(if: ScratchSSHServer.availableOrCI, ScratchSSHServer.reason))
    func theReadmeDeliveryWalkthroughRunsAsWritten() throws {
        let readme = try WalkthroughCLITests.readme
        let heading = try #require(readme.range(of: "\n### Encrypted to the recipient, delivered to their portal\n"))
        let rest = readme[heading.upperBound...]
        let open = try #require(rest.range(of: "```sh\n"))
        let close = try #require(rest[open.upperBound...].range(of: "\n```"))
        let script = String(rest[open.upperBound..<close.lowerBound])
        for command in ["cohort export --encrypt-to", "cohort deliver", "openssl cms -decrypt", "cohort verify"] { #expect(script.contains(command)) }
        let server = try ScratchSSHServer()
        let cli = try CLI()
        defer { cli.cleanup() }
        let environment = "export PORTAL_HOST=127.0.0.1 PORTAL_PORT=\(server.port) PORTAL_USER=\(server.user) PORTAL_DIR=\(server.inbox) PORTAL_KEY=\(server.identity)\n"
        let r = try WalkthroughCLITests.bash(environment + script, in: cli.directory)
        #expect(r.status == 0, "the README block failed: \(r.stderr.suffix(3000))")
        #expect(r.stdout.contains(server.hostKeyFingerprint), "ssh-keygen -lf shows the pinned key")
        #expect(r.stdout.contains("export.delivered") && r.stdout.contains("verified:"), "\(r.stdout.suffix(2000))")
        #expect(Self.files(server.inbox + "/axspa").count == 4, "the three delivered files and the recipient's decrypted archive")
    }

    /// A known-hosts line for 127.0.0.1:port with a key that is not the server's.
    static func otherHostKeyLine(_ cli: CLI, port: Int) throws -> String {
        let key = cli.path("impostor_ed25519")
        let (status, output) = try CLI.tool("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", key])
        try #require(status == 0, "\(output)")
        let pub = try String(contentsOfFile: key + ".pub", encoding: .utf8).split(separator: " ").prefix(2).joined(separator: " ")
        return "[127.0.0.1]:\(port) \(pub)\n"
    }
}
