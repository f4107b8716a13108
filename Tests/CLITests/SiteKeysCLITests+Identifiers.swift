import Foundation
import Testing

/// Per-site identifier keys (issue #30 item 1), on PostgreSQL: each site's identifiers are sealed
/// with a data key of that site, wrapped for the owner's `pii.key` and for the site's
/// key-encryption key (the `pii.key` of the site's workspace). Checked by an AES-GCM that is not
/// cohort's (Python `cryptography`, Debian python3-cryptography) on the bytes the database holds.
extension SiteKeysCLITests {
    static let python = "/usr/bin/python3"
    /// Whether the independent AES-GCM is there; under CI=true the test runs (and fails) without it.
    static let cryptographyOrCI =
        ((try? CLI.tool(python, ["-c", "import cryptography.hazmat.primitives.ciphers.aead"]).0) == 0)
        || ProcessInfo.processInfo.environment["CI"] != nil

    /// AES-256-GCM open of `sealed` (nonce ‖ ciphertext ‖ tag, hex) under `key` (hex) with `aad`:
    /// the plaintext as hex, or nil when it does not open.
    static func open(_ sealed: String, key: String, aad: String) throws -> String? {
        let script = """
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
            argv = __import__("sys").argv
            key, aad, c = bytes.fromhex(argv[1]), argv[2].encode(), bytes.fromhex(argv[3])
            try:
                print(AESGCM(key).decrypt(c[:12], c[12:], aad).hex())
            except Exception:
                print("FAIL")
            """
        let (status, out) = try CLI.tool(python, ["-c", script, key, aad, sealed])
        try #require(status == 0, "\(out)")
        let text = out.trimmingCharacters(in: .whitespacesAndNewlines)
        return text == "FAIL" ? nil : text
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    static func keyHex(_ workspace: String) throws -> String { hex(try Data(contentsOf: URL(fileURLWithPath: workspace + "/keys/pii.key"))) }

    static func text(_ hexText: String?) -> String? {
        guard let hexText else { return nil }
        var bytes: [UInt8] = []
        var index = hexText.startIndex
        while index < hexText.endIndex, let next = hexText.index(index, offsetBy: 2, limitedBy: hexText.endIndex) {
            bytes.append(UInt8(hexText[index..<next], radix: 16) ?? 0)
            index = next
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Rows `site|holder|wrapped hex` of `site_data_keys`, read as the owner.
    static func wrappedKeys(_ cli: CLI) throws -> [(site: String, holder: String, wrapped: String)] {
        let (status, out) = try cli.sql("SELECT site, holder, encode(wrapped, 'hex') FROM site_data_keys ORDER BY site, holder")
        try #require(status == 0, "\(out)")
        return out.split(separator: "\n").map { $0.split(separator: "|").map(String.init) }.filter { $0.count == 3 }.map { ($0[0], $0[1], $0[2]) }
    }

    static func wrapAAD(site: String, holder: String) -> String { "cohort/site-data-key@1 site=\(site) holder=\(holder)" }

    @Test(.enabled(if: CLI.store == .postgres && cryptographyOrCI, "PostgreSQL pass (COHORT_TEST_STORE=postgres) with python3-cryptography"))
    func eachSiteOpensOnlyItsOwnIdentifiers() throws {
        let sites = try TwoSites()
        let cli = sites.cli
        defer { cli.cleanup() }
        // B enrols after its key exists (P-0001..3 were enrolled before: the invitation re-sealed them once).
        let enrol = try cli.run(
            ["participant", "enroll", "--code", "P-0004", "--name", "Dee Qxlee", "--time-zone", "Europe/Paris", "--enrolled-on", "2026-03-01", "--site", "site-b",
             "-w", sites.bob])
        try #require(enrol.status == 0, "\(enrol.output)")

        // The listings: A sees its own names only; the owner sees every site's.
        let aList = try cli.run(["participant", "list", "--show-identifiers", "-w", sites.alice])
        #expect(aList.status == 0 && aList.stdout.contains("Ann Qxlee") && aList.stdout.contains("Bob Qxlee"), "\(aList.output)")
        #expect(!aList.stdout.contains("Cy Qxlee") && !aList.stdout.contains("Dee Qxlee"), "\(aList.output)")
        let ownerList = try cli.ws("participant", "list", "--show-identifiers")
        for name in ["Ann Qxlee", "Bob Qxlee", "Cy Qxlee", "Dee Qxlee"] { #expect(ownerList.stdout.contains(name), "\(name): \(ownerList.output)") }
        // Who did what: A's trail listing shows its own actors, and the owner's and B's as sealed (not an error).
        let aAudit = try cli.run(["audit", "show", "-w", sites.alice])
        #expect(aAudit.status == 0 && aAudit.stdout.contains("[sealed]"), "\(aAudit.output)")
        let ownerAudit = try cli.ws("audit", "show")
        #expect(ownerAudit.status == 0 && !ownerAudit.stdout.contains("[sealed]"), "\(ownerAudit.output)")
        // Row security hides B's wrapped keys from A's role.
        let (_, seen) = try cli.sql("SELECT count(*) FROM site_data_keys WHERE site <> 'site-a'", workspace: sites.alice)
        #expect(seen.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(seen)")

        // The bytes, read as the owner (a dump): A's keys open A's data key and A's rows, nothing of B's.
        let wrapped = try Self.wrappedKeys(cli)
        let aKEK = try Self.keyHex(sites.alice), ownerKey = try Self.keyHex(cli.workspace)
        let aSiteRow = try #require(wrapped.first { $0.site == "site-a" && $0.holder.hasPrefix("site:") })
        let aData = try #require(try Self.open(aSiteRow.wrapped, key: aKEK, aad: Self.wrapAAD(site: "site-a", holder: aSiteRow.holder)))
        #expect(aKEK != ownerKey)
        for row in wrapped where row.site == "site-b" {
            for key in [aKEK, aData] { #expect(try Self.open(row.wrapped, key: key, aad: Self.wrapAAD(site: row.site, holder: row.holder)) == nil) }
        }
        let bStudyRow = try #require(wrapped.first { $0.site == "site-b" && $0.holder == "study" })
        let bData = try #require(try Self.open(bStudyRow.wrapped, key: ownerKey, aad: Self.wrapAAD(site: "site-b", holder: "study")))
        let (_, names) = try cli.sql("SELECT code, id::text, encode(name_enc, 'hex') FROM participants ORDER BY code")
        let rows = names.split(separator: "\n").map { $0.split(separator: "|").map(String.init) }.filter { $0.count == 3 }
        try #require(rows.count == 4, "\(names)")
        for row in rows {
            let aad = "participant:\(row[1]):name"
            let isA = row[0] == "P-0001" || row[0] == "P-0002"
            #expect(try Self.open(row[2], key: ownerKey, aad: aad) == nil, "\(row[0]) is still under the study key")
            #expect((try Self.open(row[2], key: aData, aad: aad) != nil) == isA, "\(row[0]) with A's data key")
            #expect(try Self.open(row[2], key: aKEK, aad: aad) == nil, "\(row[0]) with A's key-encryption key")
            #expect((Self.text(try Self.open(row[2], key: bData, aad: aad)) != nil) == !isA, "\(row[0]) with B's data key")
        }
        #expect(Self.text(try Self.open(rows[3][2], key: bData, aad: "participant:\(rows[3][1]):name")) == "Dee Qxlee")

        // cohort with A's keys on a connection that sees every row (the owner's URL: a stolen dump) prints none of B's names.
        let stolen = cli.path("stolen")
        try FileManager.default.copyItem(atPath: sites.alice, toPath: stolen)
        try FileManager.default.removeItem(atPath: stolen + "/store.json")
        try FileManager.default.copyItem(atPath: cli.workspace + "/store.json", toPath: stolen + "/store.json")
        let dump = try cli.run(["participant", "list", "--show-identifiers", "-w", stolen])
        #expect(!dump.output.contains("Cy Qxlee") && !dump.output.contains("Dee Qxlee"), "\(dump.output)")
        #expect(dump.status != 0 && dump.stderr.contains("another site's identifiers do not open here"), "\(dump.output)")

        // Rotation: a new key-encryption key for site A; no row re-encrypted; A's old workspace no longer opens A's data key.
        let (_, before) = try cli.sql("SELECT encode(name_enc, 'hex') FROM participants WHERE code = 'P-0001'")
        let rotate = try cli.ws("site", "rotate-key", "--site", "site-a", "--role", sites.aliceRole, "--out", cli.path("rotated-a"))
        try #require(rotate.status == 0, "\(rotate.output)")
        let (_, after) = try cli.sql("SELECT encode(name_enc, 'hex') FROM participants WHERE code = 'P-0001'")
        #expect(before == after && !before.isEmpty)
        for row in try Self.wrappedKeys(cli) where row.site == "site-a" {
            #expect(try Self.open(row.wrapped, key: aKEK, aad: Self.wrapAAD(site: row.site, holder: row.holder)) == nil, "\(row.holder)")
        }
        let old = try cli.run(["participant", "list", "--show-identifiers", "-w", sites.alice])
        #expect(old.status == 6 && old.stderr.contains("no longer opens"), "\(old.output)")
        #expect(!old.output.contains("Ann Qxlee"))
        let rejoin = try cli.run(["site", "join", cli.path("rotated-a"), "-w", cli.path("alice2")])
        try #require(rejoin.status == 0, "\(rejoin.output)")
        let newList = try cli.run(["participant", "list", "--show-identifiers", "-w", cli.path("alice2")])
        #expect(newList.status == 0 && newList.stdout.contains("Ann Qxlee") && !newList.stdout.contains("Cy Qxlee"), "\(newList.output)")
        // B is untouched by A's rotation.
        let bList = try cli.run(["participant", "list", "--show-identifiers", "-w", sites.bob])
        #expect(bList.status == 0 && bList.stdout.contains("Dee Qxlee"), "\(bList.output)")
        // Only the owner rotates.
        let rogue = try cli.run(["site", "rotate-key", "--site", "site-b", "--out", cli.path("rogue-rotate"), "-w", sites.bob])
        #expect(rogue.status == 6, "\(rogue.output)")
    }
}
