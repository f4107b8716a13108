import Foundation
import Testing

/// End-to-end tests of the foundation commands, through the built binary.
@Suite(.serialized)
struct FoundationCLITests {
    @Test func initCreatesWorkspaceWithPrivateFiles() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        for file in [CLI.storeFile, "keys/study.secret", "keys/pii.key", "keys/signing.pem", "keys/signing.pub.pem"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: cli.workspace + "/" + file)
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
            #expect(mode & 0o077 == 0, "\(file) has mode \(String(mode, radix: 8))")
        }
        // A second init refuses to overwrite.
        let again = try cli.run(["init", "--dir", cli.workspace])
        #expect(again.status == 5)
        #expect(again.stderr.contains("already exists"))
        // Stock OpenSSL reads the signing key.
        let (status, _) = try CLI.tool("/usr/bin/openssl", ["pkey", "-in", cli.workspace + "/keys/signing.pem", "-noout"])
        #expect(status == 0)
    }

    @Test func keysShowPrintsFingerprintsNotSecrets() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        let r = try cli.ws("keys", "show")
        #expect(r.status == 0)
        #expect(r.stdout.contains("SHA256:"))
        let secret = try Data(contentsOf: URL(fileURLWithPath: cli.workspace + "/keys/study.secret"))
        let hex = secret.map { String(format: "%02x", $0) }.joined()
        #expect(!r.stdout.contains(hex))
        #expect(!r.stdout.contains("PRIVATE"))
    }

    @Test func groupReadableKeyIsRefusedWithFix() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: cli.workspace + "/keys/pii.key")
        let r = try cli.ws("participant", "list")
        #expect(r.status == 6)
        #expect(r.stderr.contains("chmod 600"))
    }

    @Test func protocolValidateReportsEveryProblemWithLines() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let bad = try cli.write(
            "bad.yaml",
            """
            schema: cohort/protocol@1
            id: bad
            revision: two
            titel: "typo"
            institution: X
            """)
        let r = try cli.run(["protocol", "validate", bad])
        #expect(r.status == 1)
        #expect(r.output.contains("bad.yaml:3: error: revision"))
        #expect(r.output.contains("did you mean 'title'"))
        #expect(r.output.contains("missing required key"))
        let good = try cli.run(["protocol", "validate", "protocols/axspa-wearables.yaml", "protocols/migraine-risk.yaml", "protocols/minimal.yaml"])
        #expect(good.status == 0, "\(good.output)")
        let json = try cli.run(["protocol", "show", "protocols/minimal.yaml", "--format", "json"])
        #expect(json.status == 0)
        #expect(json.stdout.contains("\"id\" : \"minimal-pain\""))
    }

    @Test func rosterImportIsAllOrNothing() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        let cases: [(String, String, String)] = [
            ("P-1,Ann Lee,,,1980-01-01,female,,,,Europe/Berlin,\(CLI.day(-3)),\nP-1,Bob Lee,,,1981-01-01,male,,,,Europe/Berlin,\(CLI.day(-3)),\n", ":4: code", "appears twice"),
            ("P-1,Ann Lee,,,1980-02-30,female,,,,Europe/Berlin,\(CLI.day(-3)),\n", ":3: birth_date", "existing date"),
            ("P-1,Ann Lee,,,1980-02-01,female,,,,Mars/Olympus,\(CLI.day(-3)),\n", ":3: time_zone", "IANA time zone"),
            ("P-1,Ann Lee,,,1980-02-01,female,,,,Europe/Berlin,2025-13-01,\n", ":3: enrolled_on", "existing date"),
        ]
        for (body, location, message) in cases {
            let file = try cli.write("roster.csv", CLI.rosterHeader + "P-0,Good Person,,,1970-01-01,male,,,,UTC,\(CLI.day(-3)),\n" + body)
            let before = try cli.count("participants")
            let events = try cli.count("audit_events")
            let r = try cli.ws("participant", "import", file)
            #expect(r.status == 3, "\(r.output)")
            #expect(r.stderr.contains("roster.csv" + location), "\(r.stderr)")
            #expect(r.stderr.contains(message), "\(r.stderr)")
            #expect(try cli.count("participants") == before)
            #expect(try cli.count("audit_events") == events)
            // No identifier value is echoed.
            #expect(!r.stderr.contains("Ann Lee") && !r.stderr.contains("Mars/Olympus") && !r.stderr.contains("1980-02-30"))
        }
    }

    @Test func enrollmentIssuesTokenAndListHidesIdentifiers() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        let r = try cli.ws("participant", "enroll", "--code", "P-0042", "--name", "Ingrid Müller", "--birth-date", "1975-04-03", "--sex", "female",
            "--zip", "02139", "--time-zone", "Europe/Berlin", "--enrolled-on", CLI.day(-5), "--device", "Ingrid's Garmin Venu", "--format", "json")
        #expect(r.status == 0, "\(r.output)")
        let token = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]).first?["withdrawal_token"] as? String
        #expect((token?.count ?? 0) >= 26)
        let list = try cli.ws("participant", "list")
        #expect(list.stdout.contains("P-0042"))
        #expect(!list.stdout.contains("Ingrid"))
        let shown = try cli.ws("participant", "list", "--show-identifiers", "--format", "csv")
        #expect(shown.stdout.contains("Ingrid Müller"))
        // The token is stored only as a salted hash.
        let raw = try cli.databaseBytes()
        #expect(raw.range(of: Data((token ?? "x").utf8)) == nil)
        #expect(raw.range(of: Data("Ingrid".utf8)) == nil)
    }

    @Test func dataImportRejectsBadInputAndStoresNothing() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        try cli.enrollTwo()
        let t = "\(CLI.day(-2))T08:30:00+01:00"
        let header = "participant,kind,start,end,value,unit,text,source,note\n"
        let good = "P-0001,pain,\(t),,4,{score},,app,\n"
        let cases: [(String, String, String)] = [
            ("participant,kind,start,valeu\n", ":1: column 4", "did you mean 'value'"),
            (header + good + "P-0001,pain,\(t),,four,,,,\n", ":3: value", "expected a number"),
            (header + good + "P-0001,painn,\(t),,4,,,,\n", ":3: kind", "unknown record kind"),
            (header + good + "P-9999,pain,\(t),,4,,,,\n", ":3: participant", "no enrolled participant"),
            (header + good + "P-0001,pain,\(t),,11,,,,\n", ":3: value", "out of range"),
            (header + good + "P-0001,heart_rate,\(t),,400,/min,,,\n", ":3: value", "out of range"),
            (header + good + "P-0001,pain,2001-01-01T08:00:00Z,,4,,,,\n", ":3: start", "before the participant's enrollment"),
            (header + good + "P-0001,body_mass,\(t),,70,kg,,,\n", ":3: kind", "does not collect"),
            (header + good + "P-0001,pain,\(CLI.day(-2))T25:00,,4,,,,\n", ":3: start", "ISO 8601"),
            (header + good + "P-0001,heart_rate,\(t),,70,furlongs,,,\n", ":3: unit", "unit not accepted"),
        ]
        for (body, location, message) in cases {
            let file = try cli.write("data.csv", body)
            let before = try cli.count("records")
            let batches = try cli.count("import_batches")
            let r = try cli.ws("data", "import", file)
            #expect(r.status == 3, "\(r.output)")
            #expect(r.stderr.contains("data.csv" + location), "expected \(location) in \(r.stderr)")
            #expect(r.stderr.contains(message), "expected \(message) in \(r.stderr)")
            #expect(try cli.count("records") == before)
            #expect(try cli.count("import_batches") == batches)
        }
    }

    @Test func dataImportIsIdempotentAndSupportsNDJSONAndRejects() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        try cli.enrollTwo()
        let d = CLI.day(-2)
        let csv = try cli.write(
            "s.csv",
            "participant,kind,start,value,unit,note\nP-0001,pain,\(d)T08:30:00,4,,\"stiff, tired\"\nP-0002,morning_stiffness,\(d)T07:00:00-05:00,1.5,h,\n")
        let first = try cli.ws("data", "import", csv, "--format", "json")
        #expect(first.status == 0, "\(first.output)")
        #expect(try cli.count("records") == 2)
        let again = try cli.ws("data", "import", csv)
        #expect(again.stdout.contains("0 new, 2 already stored"))
        #expect(try cli.count("records") == 2)
        // Units converted to canonical: 1.5 h → 90 min; 150 lb is not collected here, use degF.
        let (_, value) = try cli.sql("SELECT value FROM records WHERE kind = 'morning_stiffness'")
        #expect(CLI.rows(value, realColumn: 0) == ["90.0"])
        let nd = try cli.write(
            "w.ndjson",
            "{\"participant\":\"P-0001\",\"kind\":\"ambient_temperature\",\"start\":\"\(d)T12:00:00+01:00\",\"value\":68,\"unit\":\"[degF]\"}\n"
                + "{\"participant\":\"P-0001\",\"kind\":\"heart_rate\",\"start\":\"\(d)T12:00:00+01:00\",\"value\":72,\"unit\":\"/min\"}\n")
        #expect(try cli.ws("data", "import", nd).status == 0)
        #expect(try cli.count("records") == 4)
        let mixed = try cli.write("m.csv", "participant,kind,start,value\nP-0001,fatigue,\(d)T09:00:00,3\nP-0001,fatigue,\(d)T10:00:00,99\n")
        let r = try cli.ws("data", "import", mixed, "--rejects", cli.path("rejects.csv"))
        #expect(r.status == 0, "\(r.output)")
        #expect(r.stdout.contains("1 new") && r.stdout.contains("1 rejected"))
        let rejects = try String(contentsOfFile: cli.path("rejects.csv"), encoding: .utf8)
        #expect(rejects.contains("3,value,out of range"))
    }

    /// An audit event edited behind cohort's back (sqlite3 on study.db, or SQL through the
    /// PostgreSQL URL) breaks the chain at that event.
    @Test func auditVerifyCatchesAnEventEditedWithSQL() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        try cli.enrollTwo()
        #expect(try cli.ws("audit", "verify").status == 0)
        let (edited, out) = try cli.sql("UPDATE audit_events SET actor = 'mallory' WHERE seq = 3")
        #expect(edited == 0, "\(out)")
        let r = try cli.ws("audit", "verify")
        #expect(r.status == 1)
        #expect(r.stdout.contains("event 3"))
        let shown = try cli.ws("audit", "show", "--format", "json")
        #expect(shown.status == 0 && shown.stdout.contains("participant.enroll"))
    }

    @Test func demoRunsEndToEnd() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let r = try cli.run(["demo", "--dir", cli.path("demo"), "--participants", "4", "--seed", "3"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.stdout.contains("4 enrolled"))
        #expect(r.stdout.contains("audit trail      intact"))
        // Re-running replaces the previous demo when confirmed (--yes; NewcomerCLITests: not unasked).
        #expect(try cli.run(["demo", "--dir", cli.path("demo"), "--participants", "2", "--yes"]).status == 0)
    }
}
